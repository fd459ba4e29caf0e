/**
 * The shapes of Loupe's Connect clusters answer and of Connect's own answers as the proxy passes
 * them on. Imports only zod: the UI takes its types from here.
 */
import { z } from "zod";

/** A flat connector config; values may arrive as numbers or booleans (`"tasks.max": 5`). */
export const flatConfig = z.record(z.string(), z.unknown());
export const createBody = z.looseObject({ name: z.string().min(1), config: flatConfig });

const str = z.string();
const int = z.number().int();
export const configMap = z.record(z.string(), z.string());
export const connectorInfo = z.looseObject({
  name: str,
  config: configMap,
  tasks: z.array(z.looseObject({ connector: str, task: int })),
  type: str.nullable().optional(),
});
export const taskState = z.looseObject({ id: int, state: str, worker_id: str, trace: str.optional() });
export const connectorStatus = z.looseObject({
  name: str,
  connector: z.looseObject({ state: str, worker_id: str, trace: str.optional() }),
  tasks: z.array(taskState),
  type: str.optional(),
});
/** What the catalogue adds to Connect's `{class, type, version}` of a plugin (see catalogue.ts). */
export const pluginEntry = z.object({
  name: str,
  icon: str,
  description: str,
  author: str,
  docs: str,
  uiEnabled: z.boolean(),
});
export const plugin = z.looseObject({
  class: str,
  type: str,
  version: str.optional(),
  ...pluginEntry.shape,
});
export const workerState = z.object({
  url: str,
  state: z.enum(["UP", "DOWN"]),
  version: str.optional(),
  commit: str.optional(),
  kafkaClusterId: str.optional(),
  error: str.optional(),
});
export const connectCluster = z.object({ alias: str, workers: z.array(workerState) });

/** One setting in Connect's answer to a validation: its definition and what is wrong with its value. */
export const configDefinition = z.looseObject({
  name: str,
  type: str,
  required: z.boolean(),
  default_value: str.nullable(),
  importance: str,
  documentation: str,
  group: str.nullable(),
  display_name: str,
});
export const configInfos = z.looseObject({
  name: str,
  error_count: int,
  groups: z.array(str),
  configs: z.array(
    z.looseObject({
      definition: configDefinition,
      value: z.looseObject({
        name: str,
        value: str.nullable(),
        recommended_values: z.array(str),
        errors: z.array(str),
        visible: z.boolean(),
      }),
    }),
  ),
});

export type ConnectWorker = z.output<typeof workerState>;
export type ConnectCluster = z.output<typeof connectCluster>;
export type ConnectorInfo = z.output<typeof connectorInfo>;
export type ConnectorStatus = z.output<typeof connectorStatus>;
export type TaskStatus = z.output<typeof taskState>;
export type ConnectPlugin = z.output<typeof plugin>;
export type PluginEntry = z.output<typeof pluginEntry>;
export type ConfigDefinition = z.output<typeof configDefinition>;
export type ConfigInfos = z.output<typeof configInfos>;
export type ConnectorConfig = z.output<typeof configMap>;
