/**
 * What a runner needs of its processor, built each time it (re)starts: the processor's kept
 * program (compiled once, see programs.ts), the source's decoders (SET formats, topic metadata, or inference, as queries decode) and the
 * target's partition count (a target recreated with another count is seen at the restart).
 */
import { AppError } from "../../errors.ts";
import type { KafkaCluster, KafkaPool } from "../../kafka/index.ts";
import { isCompacted } from "../sql/compaction.ts";
import type { SqlService } from "../sql/service.ts";
import { changelogOf, repartitionOf } from "./engine.ts";
import { type OutputSchemaOf, outputEncoder } from "./output.ts";
import type { ProcessorPrograms } from "./programs.ts";
import type { ProcessorRow, RunnerSetup } from "./types.ts";

/** Creates an internal topic unless it exists (another runner may create it at the same time). */
async function ensureTopic(kafka: KafkaCluster, name: string, partitions: number, configs: Record<string, string>): Promise<number> {
  const [existing] = await kafka.topics.describe([name]).catch(() => [undefined]);
  if (existing) return existing.partitionDetails.length;
  await kafka.topics.create({ name, partitions, replication: -1, configs }).catch((err: unknown) => {
    if (!(err instanceof AppError && err.code === "CONFLICT")) throw err;
  });
  return partitions;
}

export function runnerSetup(
  pool: KafkaPool,
  sql: SqlService,
  prefix: string,
  schemaOf: OutputSchemaOf,
  programs: ProcessorPrograms,
): (p: ProcessorRow) => Promise<RunnerSetup> {
  return async (p) => {
    // InvalidProgramError when the stored text no longer compiles: the runner fails at once.
    const program = programs.of(p);
    const kafka = pool.get(p.cluster);
    const { keyDecoder, valueDecoder } = await sql.decoders(p.cluster, program.source, program.settings, program.valueFields);
    const [target, source] = await kafka.topics.describe([program.target, program.source]);
    if (!target) throw new AppError("NOT_FOUND", `Topic '${program.target}' does not exist`);
    if (!source) throw new AppError("NOT_FOUND", `Topic '${program.source}' does not exist`);
    const encodeValue = await outputEncoder(program, p.cluster, schemaOf);
    const targetCompacted = await isCompacted(kafka, program.target);
    let changelog: string | undefined;
    let repartition: RunnerSetup["repartition"];
    if (program.aggregate) {
      let inputPartitions = source.partitionDetails.length;
      if (!program.aggregate.groupedByRecordKey) {
        const topic = repartitionOf(prefix, p.id);
        inputPartitions = await ensureTopic(kafka, topic, inputPartitions, { "cleanup.policy": "delete" });
        repartition = { topic, partitions: inputPartitions };
      }
      changelog = changelogOf(prefix, p.id);
      await ensureTopic(kafka, changelog, inputPartitions, { "cleanup.policy": "compact" });
    }
    return {
      ...(changelog ? { changelog } : {}),
      ...(repartition ? { repartition } : {}),
      ...(encodeValue ? { encodeValue } : {}),
      program,
      decodeKey: (bytes) => {
        const d = keyDecoder(bytes);
        return d instanceof Promise ? d.then((x) => x.value) : d.value;
      },
      decodeValue: (bytes) => {
        const d = valueDecoder(bytes);
        return d instanceof Promise ? d.then((x) => x.value) : d.value;
      },
      targetPartitions: target.partitionDetails.length,
      targetCompacted,
    };
  };
}
