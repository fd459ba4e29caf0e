/**
 * The Kafka Connect proxy (`/api/proxy-connect/{clusterAlias}/...`, the SPEC's 14 routes and
 * Connect's config validation) and the clusters' page (`/api/connect/clusters`).
 *
 * Transparent for honest use: status and body as the worker answers them (409 while Connect
 * rebalances included), with three exceptions: a PUT of a config that creates the connector
 * answers 200 (the Python client wants exactly 200), the plugin list carries the catalogue's
 * fields, and `read`/`nodata` users see secrets masked. Closed for the rest: each path segment is
 * validated and encoded whole, the upstream path is built from constants and those segments
 * only, only the query parameters a route takes go upstream, no header of the client does,
 * a body is parsed and sent re-serialised (what the guard rails checked is what Connect gets),
 * and configs that break a guard rail are refused to non-admins.
 */
import type { Context } from "hono";
import { z } from "zod";
import { AppError, type ErrorCode } from "../../errors.ts";
import { type AppEnv, clusterOf, userOf } from "../../http/context.ts";
import { refuse } from "../../http/refuse.ts";
import { defineRoute, json, RouteGroup, relayed } from "../../http/route.ts";
import { intSegment, nameSegment } from "../../proxy/paths.ts";
import type { UpstreamAnswer } from "../../proxy/upstream.ts";
import { JsonDepthError, parseJson } from "../../util/json.ts";
import { internalPatternRefusal } from "../access/scope.ts";
import type { NotificationService } from "../alerts/notifications.ts";
import type { AuditService } from "../audit/service.ts";
import type { AuditChange } from "../audit/types.ts";
import { enrichPlugins } from "./catalogue.ts";
import { describeViolations, guardRailViolations } from "./guard-rails.ts";
import {
  configInfos,
  configMap,
  connectCluster,
  connectorInfo,
  connectorStatus,
  createBody,
  flatConfig,
  plugin,
  taskState,
} from "./schemas.ts";
import type { ConnectService } from "./service.ts";
import { type ConnectorTopics, connectorTopics, knownPluginType } from "./topics.ts";

/** How many topic problems a refusal names. */
const MAX_PROBLEMS = 20;

/** SPEC alert 3000. */
export const CONNECTOR_DELETED_ALERT = { id: 3000, summary: "Connector deleted" } as const;

const BASE = "/api/proxy-connect/{clusterAlias}";
const tags = ["connect"];

const aliasParams = z.object({ clusterAlias: z.string() });
const connectorParams = z.object({ clusterAlias: z.string(), connectorName: z.string() });
const taskParams = z.object({ clusterAlias: z.string(), connectorName: z.string(), task_id: z.string() });
const pluginParams = z.object({ clusterAlias: z.string(), plugin: z.string() });

const str = z.string();
const int = z.number().int();
const noContent = (description: string) => relayed({ description });
/** Connect's answer, passed on (secrets masked, plugins enriched): documented here, built by Connect. */
const fromConnect = <S extends z.ZodType>(schema: S, description?: string) => relayed(json(schema, description));

/**
 * What the pending audit intent keeps of a request before the handler runs: the connector's
 * name, its class and the restart flags, never its config (whose secrets only this domain
 * recognises, with the configured extra keys). The handler's masked config replaces it.
 */
function intentOf(fields: Record<string, unknown>): Record<string, unknown> {
  const nested = fields.config;
  const config = (nested && typeof nested === "object" ? nested : fields) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const keep = {
    name: fields.name,
    "connector.class": config["connector.class"],
    includeTasks: fields.includeTasks,
    onlyFailed: fields.onlyFailed,
  };
  for (const [k, v] of Object.entries(keep)) if (v !== undefined) out[k] = v;
  return out;
}
const audited = (change: AuditChange) => ({ type: "CONNECTOR" as const, change, request: intentOf });

export const connectApi = {
  clusters: defineRoute({
    method: "GET",
    path: "/api/connect/clusters",
    level: "nodata",
    summary: "Connect clusters and whether each worker answers",
    tags,
    responses: { 200: json(z.array(connectCluster)) },
  }),
  list: defineRoute({
    method: "GET",
    path: `${BASE}/connectors`,
    level: "nodata",
    summary: "Connector names (with `expand=status` / `expand=info`: a map of name to details)",
    tags,
    request: { params: aliasParams, query: z.object({ expand: str.optional() }) },
    responses: { 200: fromConnect(z.union([z.array(str), z.record(str, z.looseObject({}))])) },
  }),
  create: defineRoute({
    method: "POST",
    path: `${BASE}/connectors`,
    level: "write",
    summary: "Create a connector (guard rails apply)",
    audit: audited("ADD"),
    tags,
    request: { params: aliasParams, body: createBody },
    responses: { 201: fromConnect(connectorInfo, "Created (Connect's answer)") },
  }),
  get: defineRoute({
    method: "GET",
    path: `${BASE}/connectors/{connectorName}`,
    level: "nodata",
    summary: "A connector: config, tasks, type",
    tags,
    request: { params: connectorParams },
    responses: { 200: fromConnect(connectorInfo) },
  }),
  getConfig: defineRoute({
    method: "GET",
    path: `${BASE}/connectors/{connectorName}/config`,
    level: "nodata",
    summary: "A connector's config (secrets masked for read and nodata)",
    tags,
    request: { params: connectorParams },
    responses: { 200: fromConnect(configMap) },
  }),
  putConfig: defineRoute({
    method: "PUT",
    path: `${BASE}/connectors/{connectorName}/config`,
    level: "write",
    summary: "Create or change a connector's config (guard rails apply); 200 also when it creates",
    audit: audited("UPDATE"),
    tags,
    request: { params: connectorParams, body: flatConfig },
    responses: { 200: fromConnect(connectorInfo) },
  }),
  status: defineRoute({
    method: "GET",
    path: `${BASE}/connectors/{connectorName}/status`,
    level: "nodata",
    summary: "A connector's state and its tasks' states",
    tags,
    request: { params: connectorParams },
    responses: { 200: fromConnect(connectorStatus) },
  }),
  pause: defineRoute({
    method: "PUT",
    path: `${BASE}/connectors/{connectorName}/pause`,
    level: "write",
    summary: "Pause a connector and its tasks",
    audit: audited("UPDATE"),
    tags,
    request: { params: connectorParams },
    responses: { 202: noContent("Accepted (Connect's answer, no body)") },
  }),
  resume: defineRoute({
    method: "PUT",
    path: `${BASE}/connectors/{connectorName}/resume`,
    level: "write",
    summary: "Resume a paused connector",
    audit: audited("UPDATE"),
    tags,
    request: { params: connectorParams },
    responses: { 202: noContent("Accepted (Connect's answer, no body)") },
  }),
  restart: defineRoute({
    method: "POST",
    path: `${BASE}/connectors/{connectorName}/restart`,
    level: "write",
    summary: "Restart a connector (`includeTasks`, `onlyFailed`: its tasks too)",
    audit: audited("UPDATE"),
    tags,
    request: { params: connectorParams, query: z.object({ includeTasks: str.optional(), onlyFailed: str.optional() }) },
    responses: {
      202: fromConnect(connectorStatus, "Accepted, with the states being restarted (with includeTasks or onlyFailed)"),
      204: noContent("Restarted (no body)"),
    },
  }),
  tasks: defineRoute({
    method: "GET",
    path: `${BASE}/connectors/{connectorName}/tasks`,
    level: "nodata",
    summary: "A connector's tasks with their configs",
    tags,
    request: { params: connectorParams },
    responses: { 200: fromConnect(z.array(z.looseObject({ id: z.looseObject({ connector: str, task: int }), config: configMap }))) },
  }),
  taskStatus: defineRoute({
    method: "GET",
    path: `${BASE}/connectors/{connectorName}/tasks/{task_id}/status`,
    level: "nodata",
    summary: "One task's state",
    tags,
    request: { params: taskParams },
    responses: { 200: fromConnect(taskState) },
  }),
  taskRestart: defineRoute({
    method: "POST",
    path: `${BASE}/connectors/{connectorName}/tasks/{task_id}/restart`,
    level: "write",
    summary: "Restart one task",
    audit: audited("UPDATE"),
    tags,
    request: { params: taskParams },
    responses: { 204: noContent("Restarted (no body)") },
  }),
  delete: defineRoute({
    method: "DELETE",
    path: `${BASE}/connectors/{connectorName}`,
    level: "write",
    summary: "Delete a connector (raises alert 3000)",
    audit: audited("REMOVE"),
    tags,
    request: { params: connectorParams },
    responses: { 204: noContent("Deleted (no body)") },
  }),
  plugins: defineRoute({
    method: "GET",
    path: `${BASE}/connector-plugins`,
    level: "nodata",
    summary: "Connector plugins, with the catalogue's name, icon, description, author and docs",
    tags,
    request: { params: aliasParams, query: z.object({ connectorsOnly: str.optional() }) },
    responses: { 200: fromConnect(z.array(plugin)) },
  }),
  validate: defineRoute({
    method: "PUT",
    path: `${BASE}/connector-plugins/{plugin}/config/validate`,
    level: "write",
    summary: "Validate a config against a plugin (guard rails apply); Connect's messages per field",
    tags,
    request: { params: pluginParams, body: flatConfig },
    responses: { 200: fromConnect(configInfos) },
  }),
};

/** The query parameters each Connect route takes; any other is dropped (`forward` is Connect's own, between workers). */
function pickQuery(c: Context<AppEnv>, names: readonly string[]): URLSearchParams | undefined {
  const given = new URL(c.req.url).searchParams;
  const out = new URLSearchParams();
  for (const name of names) for (const v of given.getAll(name)) out.append(name, v);
  return out.size ? out : undefined;
}

/** Whether the caller sees connector secrets: `write` or `admin` on the request's cluster. */
function seesSecrets(c: Context<AppEnv>): boolean {
  const roles = c.get("session")?.scope.clusterRoles(clusterOf(c)) ?? [];
  return roles.includes("admin") || roles.includes("write");
}

/** The admin level's check: an admin group without limits. */
function isAdmin(c: Context<AppEnv>): boolean {
  return c.get("session")?.scope.unrestricted.has("admin") ?? false;
}

const STATUS_CODES: Record<number, ErrorCode> = { 400: "BAD_REQUEST", 404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 409: "CONFLICT" };

/**
 * An error page that is not Connect's JSON (its HTTP server's HTML, a proxy's text): the same
 * status with a COMPAT body, since clients read `{error_code, message}`. Jetty 12 (Connect 4)
 * refuses `%2F` and `%25` in paths, which is how a name with `/` or `%` reaches it.
 */
function notConnectJson(answer: UpstreamAnswer, encodedName: boolean, mask: (text: string) => string): AppError {
  const text = new TextDecoder().decode(answer.body);
  const reason = mask((/<title>([^<]*)<\/title>/i.exec(text)?.[1] ?? text.slice(0, 200)).replace(/\s+/g, " ").trim() || "no body");
  // Jetty names the cause in its page for a GET; for other methods its 400 has no body.
  const hint =
    /Ambiguous URI path (separator|encoding)/i.test(reason) || (encodedName && answer.status === 400)
      ? ": Kafka Connect's REST server refuses an encoded '/' or '%' in a path, so connectors whose names hold one cannot be addressed"
      : "";
  return new AppError(STATUS_CODES[answer.status] ?? "BAD_GATEWAY", `Kafka Connect answered HTTP ${answer.status} (${reason})${hint}`, {
    status: answer.status,
  });
}

/** One connector of the list with `expand=info&expand=status`. */
interface ExpandedEntry {
  info?: { name: string; config: Record<string, string>; tasks: unknown[]; type?: string };
  status?: unknown;
}

const isJson = (answer: UpstreamAnswer) => /\bjson\b/i.test(answer.contentType ?? "");

/**
 * The config a scope check reads before a change of an existing connector, from the worker's
 * answer to `GET .../config`; null when Connect refuses the request itself (a connector it does
 * not know: 404, a name it cannot route: 400): that answer is the caller's, and the change is
 * not sent. Fails closed: any other answer than a JSON object (409 or a 5xx from a worker still
 * rebalancing after the read retries, an odd body) refuses the change with 502 rather than
 * send it unchecked.
 */
export function configToCheck(answer: UpstreamAnswer, action: string): Record<string, unknown> | null {
  if (answer.status >= 400 && answer.status < 500 && answer.status !== 409) return null;
  const why = `Loupe does not ${action} a connector whose topics it cannot check`;
  if (answer.status !== 200 || !isJson(answer)) {
    throw new AppError("BAD_GATEWAY", `Kafka Connect did not give the connector's config (HTTP ${answer.status}): ${why}`);
  }
  const config = connectJson(answer);
  if (!config || typeof config !== "object" || Array.isArray(config)) {
    throw new AppError("BAD_GATEWAY", `Kafka Connect gave a config that is not an object: ${why}`);
  }
  return config as Record<string, unknown>;
}

/**
 * A worker's JSON answer, parsed with the nesting bound of util/json.ts (the reshaping walks it);
 * an answer that is no JSON, or nested too deeply, is the worker's fault: 502.
 */
function connectJson(answer: UpstreamAnswer): unknown {
  try {
    return parseJson(new TextDecoder().decode(answer.body));
  } catch (e) {
    const why = e instanceof JsonDepthError ? e.message : "a body that is not JSON";
    throw new AppError("BAD_GATEWAY", `Kafka Connect answered HTTP ${answer.status} with ${why}`);
  }
}

/** Connect's error body `{error_code, message}` and its message, or undefined for another body. */
function refusalOf(answer: UpstreamAnswer): { body: Record<string, unknown>; message: string } | undefined {
  try {
    const body = parseJson(new TextDecoder().decode(answer.body));
    if (!body || typeof body !== "object" || Array.isArray(body)) return undefined;
    const message = (body as Record<string, unknown>).message;
    return typeof message === "string" ? { body: body as Record<string, unknown>, message } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A connector name a request would create: Connect 4 accepts names with `/`, `%` or `;`, but
 * then cannot address them again: its HTTP server refuses `%2F` and `%25` in every path, and
 * cuts a path segment at `;` (a path parameter to Jetty), so a request a worker forwards to the
 * leader names another connector (`a;b` becomes `a`). Such a connector could never be changed
 * or deleted through the REST API: refused here, before it exists (a create, and a PUT of a
 * config, which creates when the name is new).
 */
function creatableName(name: string): void {
  nameSegment("connector name", name);
  const held = [...new Set(name.match(/[/%;]/g) ?? [])];
  if (held.length)
    throw new AppError(
      "BAD_REQUEST",
      `The connector name '${name}' holds ${held.map((ch) => `'${ch}'`).join(" and ")}: Kafka Connect would create it, but its REST server cannot address such names in later paths (no way to change or delete it)`,
    );
}

export function connectRoutes(deps: { service: ConnectService; notifications: NotificationService; audit: AuditService }) {
  const { service, notifications, audit } = deps;
  const app = new RouteGroup();
  const rails = service.guardRails;
  /** The config a request sent (create, change, validate): its secret values are masked in Connect's texts about it. */
  const sentConfigs = new WeakMap<Context<AppEnv>, Record<string, unknown>>();

  /**
   * The worker's answer as the client gets it: status and body untouched, the content type the
   * only header; `reshape` applies to a 2xx JSON body (masking, the plugin catalogue). An error's
   * message is Connect's text about the request, which may quote a refused value: its secrets
   * are masked (see SecretKeys.maskText) in the answer and in the audit entry, which keeps it.
   */
  const relay = (c: Context<AppEnv>, answer: UpstreamAnswer, reshape?: (body: unknown) => unknown, status = answer.status): Response => {
    const maskText = (text: string) => service.secrets.maskText(text, sentConfigs.get(c));
    // The router keeps `%2F` and `%25` encoded in the path: a name holding `/` or `%`.
    if (answer.status >= 400 && !isJson(answer)) throw notConnectJson(answer, /%2F|%25/i.test(c.req.path), maskText);
    if (answer.status >= 400) {
      const refused = refusalOf(answer);
      if (refused) {
        const message = maskText(refused.message);
        c.set("auditContent", { ...(c.get("auditContent") ?? {}), connectError: message.slice(0, 2000) });
        if (message !== refused.message) return c.json({ ...refused.body, message }, status as 400);
      }
    }
    if (reshape && answer.status < 300 && isJson(answer)) {
      return c.json(reshape(connectJson(answer)) as object, status as 200);
    }
    const empty = status === 204 || status === 205 || status === 304 || answer.body.byteLength === 0;
    const headers: Record<string, string> = answer.contentType && !empty ? { "content-type": answer.contentType } : {};
    if (empty) return c.body(null, status as 200, headers);
    return c.body(answer.body as Uint8Array<ArrayBuffer>, status as 200, headers);
  };

  /**
   * The guard rails on a config: refused (403, naming the keys) for a non-admin, let through for
   * an admin with the rails it overrides said in the audit entry. Off when disabled in the config.
   */
  const checkRails = async (c: Context<AppEnv>, config: Record<string, unknown>, extra: string[] = []): Promise<void> => {
    if (!rails.enabled) return;
    const violations = guardRailViolations(config, rails.deniedPlugins);
    for (const value of extra) violations.push(...guardRailViolations({ "connector.class": value }, rails.deniedPlugins));
    if (!violations.length) return;
    const said = describeViolations(violations);
    await refuseUnlessAdmin(
      c,
      isAdmin(c),
      said,
      { overridden: "guardRailsOverridden", refused: "guardRailsRefused" },
      `Loupe's guard rails refuse this connector config: ${said}. Only an administrator may set these.`,
    );
  };

  /**
   * What a rule found in a request: an admin without limits goes through, its audit entry saying
   * (`keys.overridden`) what it overrode; anyone else gets 403 `message`, the entry saying
   * (`keys.refused`) why (see `refuse`: a validation, which changes nothing, is audited as ACCESS DENY).
   */
  const refuseUnlessAdmin = async (
    c: Context<AppEnv>,
    admin: boolean,
    said: string,
    keys: { overridden: string; refused: string },
    message: string,
  ): Promise<void> => {
    if (!admin) await refuse(c, audit, message, { [keys.refused]: said });
    c.set("auditContent", { ...(c.get("auditContent") ?? {}), [keys.overridden]: said });
  };

  /**
   * The topics the config makes the connector read or write (see topics.ts), against the
   * caller's scope on the Kafka cluster of the alias (and on any other of Loupe's clusters the
   * config names by bootstrap address): read for what it consumes, write for what it produces;
   * where the topics cannot be known, write on every topic of the cluster, internal ones
   * included, which only an admin without limits holds. Refused with 403 naming each topic and
   * why, audited as a failure; an admin without limits goes through, the entry saying what a
   * scoped user would have been refused (internal topics, topics that cannot be known).
   * Applies whether or not the guard rails are on: it is the scope, not a rail.
   */
  const checkTopics = async (
    c: Context<AppEnv>,
    config: Record<string, unknown>,
    plugin?: string,
    refusal = "Loupe refuses this connector config for your topic scope",
  ): Promise<void> => {
    const alias = c.req.param("clusterAlias") ?? "";
    const scope = c.get("session")?.scope;
    const cluster = clusterOf(c);
    const given = typeof config["connector.class"] === "string" ? config["connector.class"] : undefined;
    // Validation names the plugin in its path; Connect checks the two agree, both are read here.
    const classes = [...new Set([given, plugin].filter((x): x is string => x !== undefined && x.trim() !== ""))];
    // No class, no connector: Connect refuses such a config itself.
    if (!classes.length) return;
    const analyses: ConnectorTopics[] = [];
    for (const connectorClass of classes) {
      const type = knownPluginType(connectorClass) ?? (await service.pluginType(alias, connectorClass, c.req.raw.signal));
      analyses.push(connectorTopics({ ...config, "connector.class": connectorClass }, type));
    }
    const clusters = [...new Set([cluster, ...service.kafkaClustersNamedIn(config)])];
    const admin = isAdmin(c);
    const problems = new Set<string>();
    // A validation runs nothing: only what the config itself names is refused (see TopicUse.implied).
    const counted = (x: { implied?: boolean }) => !(plugin !== undefined && x.implied);
    for (const { uses, unknown } of analyses) {
      for (const use of uses.filter(counted))
        for (const on of clusters) {
          const why = admin
            ? scope?.internal && internalPatternRefusal(scope.internal, use.topic)
            : scope
              ? scope.patternRefusal(on, use.topic, use.access)
              : "no session";
          if (why)
            problems.add(
              `it ${use.access === "read" ? "reads" : "writes"} '${use.topic}' (${use.from})${clusters.length > 1 ? ` on cluster ${on}` : ""}: ${why}`,
            );
        }
      for (const { why } of unknown.filter(counted))
        if (admin || !clusters.every((on) => scope?.everyTopic(on, "write")))
          problems.add(`${why}: only a user with write on every topic, internal ones included (an admin without limits), may set it`);
    }
    if (!problems.size) return;
    const all = [...problems];
    // A config listing thousands of topics is answered with the first few problems.
    const said =
      all.length > MAX_PROBLEMS ? `${all.slice(0, MAX_PROBLEMS).join("; ")}; and ${all.length - MAX_PROBLEMS} more` : all.join("; ");
    await refuseUnlessAdmin(c, admin, said, { overridden: "topicRulesOverridden", refused: "topicsRefused" }, `${refusal}: ${said}`);
  };

  const send = (
    c: Context<AppEnv>,
    method: string,
    path: string,
    opts: { query?: readonly string[]; fixedQuery?: URLSearchParams; body?: unknown } = {},
  ) => {
    const alias = c.req.param("clusterAlias") ?? "";
    const query = opts.fixedQuery ?? (opts.query ? pickQuery(c, opts.query) : undefined);
    return service.send(alias, {
      method,
      path,
      // Loupe's own values: Connect's REST API speaks JSON only; nothing of the client's headers goes on.
      headers:
        opts.body === undefined ? { accept: "application/json" } : { accept: "application/json", "content-type": "application/json" },
      ...(query ? { query } : {}),
      ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }),
      signal: c.req.raw.signal,
    });
  };

  /** The encoded `/connectors/<name>` of a request, the alias checked first (404 names it). */
  const connectorPath = (c: Context<AppEnv>): { alias: string; name: string; path: string } => {
    const { clusterAlias, connectorName } = c.req.param() as { clusterAlias: string; connectorName: string };
    service.upstream(clusterAlias);
    return { alias: clusterAlias, name: connectorName, path: `/connectors/${nameSegment("connector name", connectorName)}` };
  };
  const masked = (c: Context<AppEnv>, mask: (body: unknown) => unknown) => (seesSecrets(c) ? undefined : mask);

  /**
   * Pausing, resuming, restarting or deleting a connector changes what it reads and writes as
   * much as its config does: the caller's scope must cover the topics of its current config, as
   * a create of that config would (an admin without limits is not asked). The check fails
   * closed: see configToCheck.
   */
  const checkedChange = async (
    c: Context<AppEnv>,
    path: string,
    action: string,
    change: () => Promise<UpstreamAnswer>,
  ): Promise<UpstreamAnswer> => {
    if (!isAdmin(c)) {
      const read = await send(c, "GET", `${path}/config`);
      const config = configToCheck(read, action);
      if (config === null) return read;
      await checkTopics(c, config, undefined, `Loupe refuses to ${action} this connector for your topic scope`);
    }
    return change();
  };

  app.handle(connectApi.clusters, async (c) => c.json(await service.clusters()));

  app.handle(connectApi.list, async (c) => {
    service.upstream(c.req.valid("param").clusterAlias);
    const answer = await send(c, "GET", "/connectors", { query: ["expand"] });
    return relay(
      c,
      answer,
      masked(c, (b) => service.secrets.maskExpandedList(b)),
    );
  });

  app.handle(connectApi.create, async (c) => {
    const alias = c.req.valid("param").clusterAlias;
    service.upstream(alias);
    const body = c.req.valid("json");
    sentConfigs.set(c, body.config);
    c.set("auditContent", { alias, connector: body.name, config: service.secrets.maskConfig(body.config) });
    creatableName(body.name);
    await checkRails(c, body.config);
    await checkTopics(c, body.config);
    return relay(c, await send(c, "POST", "/connectors", { body }));
  });

  /**
   * Reads of a connector whose name holds `/` or `%` (made directly at Connect): its REST server
   * refuses such names in a path, but its list expanded with info and status holds them. Served
   * from there, in the shapes of the per-connector routes; changes stay impossible (Connect's
   * refusal is passed on).
   */
  const fromExpandedList = async (c: Context<AppEnv>, name: string, pick: (entry: ExpandedEntry) => unknown) => {
    const answer = await send(c, "GET", "/connectors", {
      fixedQuery: new URLSearchParams([
        ["expand", "info"],
        ["expand", "status"],
      ]),
    });
    if (answer.status !== 200 || !isJson(answer)) return relay(c, answer);
    const entry = (connectJson(answer) as Record<string, ExpandedEntry | undefined> | null)?.[name];
    if (!entry) return c.json({ error_code: 404, message: `Connector ${name} not found` }, 404);
    return c.json(pick(entry) as object);
  };
  const unaddressable = (name: string) => /[/%]/.test(name);

  app.handle(connectApi.get, async (c) => {
    const { name, path } = connectorPath(c);
    const mask = masked(c, (b) => service.secrets.maskHolder(b));
    if (unaddressable(name)) return fromExpandedList(c, name, (e) => (mask ? mask(e.info) : e.info));
    return relay(c, await send(c, "GET", path), mask);
  });

  app.handle(connectApi.getConfig, async (c) => {
    const { name, path } = connectorPath(c);
    const mask = masked(c, (b) => service.secrets.maskConfig(b));
    if (unaddressable(name)) return fromExpandedList(c, name, (e) => (mask ? mask(e.info?.config) : e.info?.config));
    return relay(c, await send(c, "GET", `${path}/config`), mask);
  });

  app.handle(connectApi.putConfig, async (c) => {
    const { alias, name, path } = connectorPath(c);
    const config = c.req.valid("json");
    sentConfigs.set(c, config);
    c.set("auditContent", { alias, connector: name, config: service.secrets.maskConfig(config) });
    creatableName(name);
    await checkRails(c, config);
    await checkTopics(c, config);
    const answer = await send(c, "PUT", `${path}/config`, { body: config });
    // Connect answers 201 when the PUT created the connector; the Python client accepts only 200.
    return relay(c, answer, undefined, answer.status === 201 ? 200 : answer.status);
  });

  app.handle(connectApi.status, async (c) => {
    const { name, path } = connectorPath(c);
    const mask = masked(c, (b) => service.secrets.maskStatus(b));
    if (unaddressable(name)) return fromExpandedList(c, name, (e) => (mask ? mask(e.status) : e.status));
    return relay(c, await send(c, "GET", `${path}/status`), mask);
  });

  for (const [route, action] of [
    [connectApi.pause, "pause"],
    [connectApi.resume, "resume"],
  ] as const)
    app.handle(route, async (c) => {
      const { alias, name, path } = connectorPath(c);
      c.set("auditContent", { alias, connector: name, action });
      return relay(c, await checkedChange(c, path, action, () => send(c, "PUT", `${path}/${action}`)));
    });

  app.handle(connectApi.restart, async (c) => {
    const { alias, name, path } = connectorPath(c);
    const q = c.req.valid("query");
    c.set("auditContent", { alias, connector: name, action: "restart", ...q });
    return relay(
      c,
      await checkedChange(c, path, "restart", () => send(c, "POST", `${path}/restart`, { query: ["includeTasks", "onlyFailed"] })),
    );
  });

  app.handle(connectApi.tasks, async (c) =>
    relay(
      c,
      await send(c, "GET", `${connectorPath(c).path}/tasks`),
      masked(c, (b) => (Array.isArray(b) ? b.map((t) => service.secrets.maskHolder(t)) : b)),
    ),
  );

  app.handle(connectApi.taskStatus, async (c) => {
    const { path } = connectorPath(c);
    const task = intSegment("task id", c.req.valid("param").task_id);
    return relay(
      c,
      await send(c, "GET", `${path}/tasks/${task}/status`),
      masked(c, (b) => service.secrets.maskStatus(b)),
    );
  });

  app.handle(connectApi.taskRestart, async (c) => {
    const { alias, name, path } = connectorPath(c);
    const task = intSegment("task id", c.req.valid("param").task_id);
    c.set("auditContent", { alias, connector: name, task, action: "restart" });
    return relay(c, await checkedChange(c, path, "restart a task of", () => send(c, "POST", `${path}/tasks/${task}/restart`)));
  });

  app.handle(connectApi.delete, async (c) => {
    const { alias, name, path } = connectorPath(c);
    c.set("auditContent", { alias, connector: name });
    const answer = await checkedChange(c, path, "delete", () => send(c, "DELETE", path));
    if (answer.status < 300)
      await notifications.raise({
        alertId: CONNECTOR_DELETED_ALERT.id,
        cluster: clusterOf(c),
        category: "Connect",
        instance: `${alias}/${name}`,
        summary: CONNECTOR_DELETED_ALERT.summary,
        source: userOf(c),
      });
    return relay(c, answer);
  });

  app.handle(connectApi.plugins, async (c) => {
    service.upstream(c.req.valid("param").clusterAlias);
    return relay(c, await send(c, "GET", "/connector-plugins", { query: ["connectorsOnly"] }), enrichPlugins);
  });

  app.handle(connectApi.validate, async (c) => {
    const { clusterAlias, plugin: name } = c.req.valid("param");
    service.upstream(clusterAlias);
    const segment = nameSegment("plugin", name);
    const config = c.req.valid("json");
    sentConfigs.set(c, config);
    // Read only by a refusal's ACCESS DENY entry: validation changes nothing.
    c.set("auditContent", { alias: clusterAlias, plugin: name, config: service.secrets.maskConfig(config) });
    await checkRails(c, config, [name]);
    await checkTopics(c, config, name);
    return relay(c, await send(c, "PUT", `/connector-plugins/${segment}/config/validate`, { body: config }));
  });

  return app;
}
