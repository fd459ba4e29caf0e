/**
 * The topics a connector config makes Kafka Connect read or write, as far as they can be
 * known from the config: a connector runs with the workers' Kafka rights, so without this a
 * user allowed to write `in.*` could have a MirrorMaker source copy `secret` into `in.secret`,
 * or a sink export any topic. The routes check each topic found here against the caller's
 * scope; where the topics cannot be known (a source of a class Loupe has no rules for, a
 * regular expression it cannot compare, a transform that renames topics), only an admin without
 * limits may set the config. Pure: no HTTP, no Kafka.
 *
 * Topics are globs in the scope's syntax (`*` any run of characters, `?` one); a plain name is
 * a glob without wildcards.
 */
import { configText } from "./config-text.ts";
import { pluginKey } from "./guard-rails.ts";

/** One topic (or glob of topics) a connector reads or writes, and the config it comes from. */
export interface TopicUse {
  topic: string;
  access: "read" | "write";
  /** Said in messages: the key, or what the connector does with it. */
  from: string;
  /**
   * Not named by the config but implied by the class or a default (MirrorMaker's `topics`
   * absent, its heartbeat copies and offset syncs): a validation, which runs nothing, is not
   * refused for it (a form asks for a plugin's definitions with an empty config).
   */
  implied?: boolean;
}

/** Why some of a config's topics cannot be known; `implied` as for TopicUse (the class itself). */
export interface Unknowable {
  why: string;
  implied?: boolean;
}

export interface ConnectorTopics {
  uses: TopicUse[];
  /** Empty when every topic is known. */
  unknown: Unknowable[];
}

export type PluginType = "source" | "sink";

/** The classes with rules of their own: Kafka's, by full name. */
const KNOWN: Record<string, PluginType> = {
  "org.apache.kafka.connect.mirror.MirrorSourceConnector": "source",
  "org.apache.kafka.connect.mirror.MirrorCheckpointConnector": "source",
  "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector": "source",
  "org.apache.kafka.connect.file.FileStreamSourceConnector": "source",
  "org.apache.kafka.connect.file.FileStreamSinkConnector": "sink",
};
const KNOWN_BY_KEY = new Map(Object.entries(KNOWN).map(([cls, type]) => [pluginKey(cls), { cls, type }]));

/**
 * The full name of one of Kafka's classes with rules here, given as Connect accepts it: the
 * full name, or an alias (`MirrorSourceConnector`, `MirrorSource`). Another package's class of
 * the same simple name is not Kafka's and has no rules here.
 */
function knownClass(connectorClass: string): string | undefined {
  const given = connectorClass.trim();
  if (given.includes(".")) return given in KNOWN ? given : undefined;
  return KNOWN_BY_KEY.get(pluginKey(given))?.cls;
}

/** The type of a class with rules of its own, or undefined (the cluster's plugin list then says). */
export function knownPluginType(connectorClass: string): PluginType | undefined {
  const cls = knownClass(connectorClass);
  return cls ? KNOWN[cls] : undefined;
}

const DEFAULT_POLICY = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy";
const IDENTITY_POLICY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy";
const DEFAULT_TOPIC_FILTER = "org.apache.kafka.connect.mirror.DefaultTopicFilter";

/** Kafka's legal topic characters. */
const NAME_CHAR = /[A-Za-z0-9._-]/;

/** Transforms that never change a record's topic (Kafka's own, by simple class name). */
const KEEPS_TOPIC = new Set([
  "cast",
  "dropheaders",
  "extractfield",
  "filter",
  "flatten",
  "headerfrom",
  "hoistfield",
  "insertfield",
  "insertheader",
  "maskfield",
  "replacefield",
  "setschemametadata",
  "timestampconverter",
  "valuetokey",
]);
/** Kafka's transforms that do. */
const RENAMES_TOPIC = new Set(["regexrouter", "timestamprouter"]);

const list = (value: string | undefined) =>
  (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * The globs a Java regular expression matches in full (`Pattern.matches`, as Connect's
 * `topics.regex` and MirrorMaker's `topics` use it), or undefined when it is not of the simple
 * form Loupe reads: alternatives (`|`) of topic characters, `\.` `\-` `\_` and one-character
 * classes (`[.]`) as literals, `.` as any character, `.*` and `.+`, optional `^` and `$`.
 * Anything else (groups, classes, other quantifiers, flags) cannot be compared with scopes.
 */
export function regexGlobs(regex: string): string[] | undefined {
  let src = regex;
  if (src.startsWith("^")) src = src.slice(1);
  if (src.endsWith("$") && !src.endsWith("\\$")) src = src.slice(0, -1);
  const out: string[] = [];
  for (const alternative of src.split("|")) {
    if (alternative === "") continue;
    const glob = alternativeGlob(alternative);
    if (glob === undefined) return undefined;
    out.push(glob);
  }
  return out.length ? out : undefined;
}

function alternativeGlob(src: string): string | undefined {
  let out = "";
  let i = 0;
  while (i < src.length) {
    const ch = src[i]!;
    let atom: string;
    if (ch === "\\") {
      const next = src[i + 1];
      if (next === undefined || !/[.\-_]/.test(next)) return undefined;
      atom = next;
      i += 2;
    } else if (ch === "[") {
      const m = /^\[\\?([A-Za-z0-9._-])\]/.exec(src.slice(i));
      if (!m) return undefined;
      atom = m[1]!;
      i += m[0].length;
    } else if (ch === ".") {
      atom = "?";
      i++;
    } else if (NAME_CHAR.test(ch)) {
      atom = ch;
      i++;
    } else return undefined;
    const quantifier = src[i];
    if (quantifier === "*" || quantifier === "+") {
      // Only `.*` and `.+`: a repeated literal (`a*`) has no glob.
      if (atom !== "?") return undefined;
      out += quantifier === "*" ? "*" : "?*";
      i++;
    } else if (quantifier === "?" || quantifier === "{") return undefined;
    else out += atom;
  }
  return out;
}

/** What the scope check needs of a config, given the plugin's type (undefined: not a plugin of the cluster). */
export function connectorTopics(config: Record<string, unknown>, type: PluginType | undefined): ConnectorTopics {
  const uses: TopicUse[] = [];
  const unknown: Unknowable[] = [];
  /** Keys a rule below has read: the generic topic keys skip them. */
  const read = new Set<string>();
  const get = (key: string) => {
    read.add(key);
    return configText(config[key]);
  };
  const connectorClass = configText(config["connector.class"])?.trim() ?? "";
  const known = knownClass(connectorClass);
  const key = known ? pluginKey(known) : "";

  if (!connectorClass) unknown.push({ why: "the config names no connector.class", implied: true });
  else if (key === "mirrorsource") mirrorSource(get, uses, unknown);
  else if (key === "mirrorcheckpoint") mirrorCheckpoint(get, uses, unknown);
  else if (key === "mirrorheartbeat") mirrorHeartbeat(get, uses, unknown);
  else if (key === "filestreamsource") {
    const topic = get("topic");
    if (topic) uses.push({ topic, access: "write", from: "topic" });
  } else if (type === undefined)
    unknown.push({
      why: `${connectorClass} is not a connector plugin of this Kafka Connect cluster, so the topics it would use cannot be known`,
      implied: true,
    });
  else if (type === "source")
    unknown.push({
      why: `${connectorClass} is a source connector Loupe has no topic rules for: the topics it writes cannot be known`,
      implied: true,
    });

  if (type === "sink") {
    // Connect's framework subscribes a sink's tasks to exactly these.
    for (const topic of list(get("topics"))) uses.push({ topic, access: "read", from: "topics" });
    const regex = get("topics.regex");
    if (regex !== undefined && regex !== "") {
      const globs = regexGlobs(regex);
      if (globs) for (const topic of globs) uses.push({ topic, access: "read", from: `topics.regex '${regex}'` });
      else unknown.push({ why: `topics.regex '${regex}' is not a pattern Loupe can compare with scopes` });
    }
  }
  const dlq = get("errors.deadletterqueue.topic.name");
  if (dlq?.trim()) uses.push({ topic: dlq.trim(), access: "write", from: "errors.deadletterqueue.topic.name" });

  // A source's transforms decide the topics its records go to.
  if (type === "source")
    for (const alias of list(get("transforms"))) {
      const transform = get(`transforms.${alias}.type`)?.trim() ?? "";
      const simple = (transform.split(".").pop() ?? "").split("$")[0]!.toLowerCase();
      if (RENAMES_TOPIC.has(simple)) unknown.push({ why: `transform '${alias}' (${transform}) renames the topics the connector writes` });
      else if (!KEEPS_TOPIC.has(simple))
        unknown.push({ why: `transform '${alias}' (${transform || "no type"}) may rename the topics the connector writes` });
    }

  // Any other key naming topics (`kafka.topic`, `offsets.storage.topic`, a plugin's `*.topic.name`):
  // written, since what a plugin does with it is not known.
  for (const [k, raw] of Object.entries(config)) {
    if (read.has(k) || /^topic\.creation\./i.test(k) || !/(^|[._-])topics?([._-]name)?$/i.test(k)) continue;
    const names = list(configText(raw));
    const bad = names.find((n) => !/^[A-Za-z0-9._-]{1,249}$/.test(n));
    if (bad !== undefined) unknown.push({ why: `${k} '${bad}' is not a topic name` });
    else for (const topic of names) uses.push({ topic, access: "write", from: k });
  }
  return { uses, unknown };
}

type Get = (key: string) => string | undefined;
type Unknown = Unknowable[];

/** MirrorMaker's replication policy: how a source topic is named on the target, and the separators. */
interface Policy {
  remote: (topic: string) => string;
  separator: string;
  /** `replication.policy.internal.topic.separator.enabled`: the separator of MirrorMaker's own topics. */
  internalSeparator: string;
}

function policyOf(get: Get, alias: string, unknown: Unknown): Policy | undefined {
  const cls = get("replication.policy.class")?.trim() || DEFAULT_POLICY;
  const separator = get("replication.policy.separator") ?? ".";
  const internalSeparator =
    (get("replication.policy.internal.topic.separator.enabled") ?? "true").trim().toLowerCase() === "false" ? "." : separator;
  if (cls === DEFAULT_POLICY) return { remote: (t) => `${alias}${separator}${t}`, separator, internalSeparator };
  if (cls === IDENTITY_POLICY) return { remote: (t) => t, separator, internalSeparator };
  unknown.push({ why: `replication.policy.class ${cls} names the topics it writes in a way Loupe cannot compute` });
  return undefined;
}

const enabled = (value: string | undefined) => (value ?? "true").trim().toLowerCase() !== "false";

/** `mm2-offset-syncs.<alias>.internal`, on the source cluster by default, named after the other side. */
function offsetSyncsTopic(get: Get, source: string, target: string, policy: Policy): string {
  const location = (get("offset-syncs.topic.location") ?? "source").trim().toLowerCase();
  const other = location === "target" ? source : target;
  return `mm2-offset-syncs${policy.internalSeparator}${other}${policy.internalSeparator}internal`;
}

const aliases = (get: Get) => ({
  source: get("source.cluster.alias") ?? "source",
  target: get("target.cluster.alias") ?? "target",
});

/**
 * MirrorSourceConnector: reads the topics `topics` matches (a list of regular expressions,
 * `.*` when absent) and writes each under its remote name (DefaultReplicationPolicy:
 * `<source alias><separator><topic>`; IdentityReplicationPolicy: the same name); writes the
 * copies of MirrorMaker's heartbeat topics (`<alias>.heartbeats`, `<alias>.<x>.heartbeats`),
 * which it copies whatever `topics` says, and its offset syncs unless
 * `emit.offset-syncs.enabled` is false. Reading the heartbeat topics is not counted: they hold
 * MirrorMaker's liveness records, and every MirrorSourceConnector copies them.
 */
function mirrorSource(get: Get, uses: TopicUse[], unknown: Unknown): void {
  const { source, target } = aliases(get);
  const policy = policyOf(get, source, unknown);
  const filter = get("topic.filter.class")?.trim();
  if (filter && filter !== DEFAULT_TOPIC_FILTER) unknown.push({ why: `topic.filter.class ${filter} decides the topics it reads` });
  const given = get("topics");
  for (const entry of list(given ?? ".*")) {
    const globs = regexGlobs(entry);
    if (!globs) {
      unknown.push({ why: `topics entry '${entry}' is not a pattern Loupe can compare with scopes` });
      continue;
    }
    for (const glob of globs) {
      const implied = given === undefined;
      uses.push({ topic: glob, access: "read", from: implied ? "topics (absent: every topic)" : "topics", implied });
      if (policy) uses.push({ topic: policy.remote(glob), access: "write", from: `the copy of topics '${entry}'`, implied });
    }
  }
  if (!policy) return;
  uses.push({
    topic: `${source}${policy.separator}*heartbeats`,
    access: "write",
    from: "the copies of the heartbeat topics",
    implied: get("source.cluster.alias") === undefined,
  });
  const emit = get("emit.offset-syncs.enabled");
  if (enabled(emit))
    uses.push({
      topic: offsetSyncsTopic(get, source, target, policy),
      access: "write",
      from: "offset syncs (emit.offset-syncs.enabled)",
      implied: emit === undefined,
    });
}

/**
 * MirrorCheckpointConnector: reads the offset syncs and writes `<source alias>.checkpoints.internal`
 * (unless `emit.checkpoints.enabled` is false); the group offsets it translates are metadata.
 */
function mirrorCheckpoint(get: Get, uses: TopicUse[], unknown: Unknown): void {
  const { source, target } = aliases(get);
  const policy = policyOf(get, source, unknown);
  if (!policy) return;
  uses.push({ topic: offsetSyncsTopic(get, source, target, policy), access: "read", from: "offset syncs", implied: true });
  const emit = get("emit.checkpoints.enabled");
  if (enabled(emit))
    uses.push({
      topic: `${source}${policy.internalSeparator}checkpoints${policy.internalSeparator}internal`,
      access: "write",
      from: "checkpoints (emit.checkpoints.enabled)",
      implied: emit === undefined,
    });
}

/** MirrorHeartbeatConnector: writes `heartbeats` (unless `emit.heartbeats.enabled` is false). */
function mirrorHeartbeat(get: Get, uses: TopicUse[], unknown: Unknown): void {
  const { source } = aliases(get);
  const policy = policyOf(get, source, unknown);
  if (policy && enabled(get("emit.heartbeats.enabled")))
    uses.push({ topic: "heartbeats", access: "write", from: "heartbeats (emit.heartbeats.enabled)" });
}
