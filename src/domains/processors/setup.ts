/**
 * What a runner needs of its processor, built each time it (re)starts: the compiled program,
 * the source's decoders (SET formats, topic metadata, or inference, as queries decode) and the
 * target's partition count (a target recreated with another count is seen at the restart).
 */
import { AppError } from "../../errors.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import { compileStream } from "../../sql/index.ts";
import type { SqlService } from "../sql/service.ts";
import type { ProcessorRow, RunnerSetup } from "./types.ts";

export function runnerSetup(pool: KafkaPool, sql: SqlService): (p: ProcessorRow) => Promise<RunnerSetup> {
  return async (p) => {
    const program = compileStream(p.sql);
    const { keyDecoder, valueDecoder } = await sql.decoders(p.cluster, program.source, program.settings);
    const [target] = await pool.get(p.cluster).topics.describe([program.target]);
    if (!target) throw new AppError("NOT_FOUND", `Topic '${program.target}' does not exist`);
    return {
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
    };
  };
}
