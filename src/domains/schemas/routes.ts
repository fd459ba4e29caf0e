/**
 * The schema registry proxy (`/api/proxy-sr/...`): the SPEC's eleven routes, and the registry
 * reads the UI needs (a version's bare schema, a compatibility check), passed to the registry's
 * Confluent API through the shared failover (see service.ts).
 *
 * What is checked before anything goes upstream: path segments (subject, version, id), the
 * query (only the registry's parameters of each route, others dropped), and the bodies (JSON
 * of the expected shape; a registry may answer a malformed body with a 500, which would mark a
 * healthy host bad). What is normalised in the answers, for the clients of CLIENTS.md: every
 * 2xx becomes exactly 200; a register answers `{id}` only; `GET config` answers
 * `{compatibilityLevel}` only (a client compares it for equality); a PUT of a level that
 * answers no body answers `{compatibility}`; setting NONE where Apicurio has no rule (its 404)
 * is the success it is; an error without the registry's JSON body gets the COMPAT body. Everything else is the registry's status, body and content type.
 *
 * Subjects follow their topic's scope (see subject-scope.ts), checked here before anything goes
 * upstream: a route naming a subject needs the route's level on its topic (changes: on every
 * cluster), the subject list holds only the subjects the caller sees, a schema by id is shown
 * when one of the subjects holding it is seen, the references of a schema sent must be seen,
 * and the global level needs `write` on every topic of every cluster. A refusal is 403 naming
 * the subject and its topic, audited as the route's change or as ACCESS DENY.
 */
import type { Context } from "hono";
import { z } from "zod";
import type { Role } from "../../config/schema.ts";
import { AppError } from "../../errors.ts";
import { type AppEnv, clusterOf } from "../../http/context.ts";
import { refuse } from "../../http/refuse.ts";
import { defineRoute, RouteGroup, relayed } from "../../http/route.ts";
import type { UpstreamAnswer } from "../../proxy/upstream.ts";
import { parseJson } from "../../util/json.ts";
import type { AuditService } from "../audit/service.ts";
import { compatibilityAnswer, compatibilityBody, levelAnswer, registerAnswer, schemaBody, versionAnswer } from "./schemas.ts";
import {
  REGISTRY_MEDIA_TYPES,
  type RegistryCall,
  type SchemaProxyService,
  schemaIdSegment,
  subjectSegment,
  versionSegment,
} from "./service.ts";
import { SubjectAccess, type SubjectRefusal } from "./subject-scope.ts";

const tags = ["schema registry"];

/** An answer in whichever of the registry's media types it chose. */
const registryJson = (schema: z.ZodType, description = "The registry's answer") =>
  relayed({
    description,
    content: Object.fromEntries(REGISTRY_MEDIA_TYPES.map((m) => [m, { schema }])),
  });

const flag = z.enum(["true", "false"]).optional();
const subjectParam = z.object({ subject: z.string().describe("the subject; slashes and spaces encoded") });
const versionParams = z.object({
  subject: z.string(),
  version: z.string().describe("`latest` (or its alias -1), or 1 to 2147483647"),
});

/** Each route's registry query parameters: the only ones passed upstream. */
const QUERY = {
  subjects: z.object({ subjectPrefix: z.string().max(1024).optional(), deleted: flag, deletedOnly: flag }),
  versions: z.object({ deleted: flag, deletedOnly: flag }),
  remove: z.object({ permanent: flag }),
  byId: z.object({ subject: z.string().max(1024).optional(), format: z.string().max(64).optional(), fetchMaxId: flag }),
  version: z.object({ deleted: flag, format: z.string().max(64).optional() }),
  register: z.object({ normalize: flag }),
  check: z.object({ verbose: flag, normalize: flag }),
  subjectConfig: z.object({ defaultToGlobal: flag }),
};

export const schemaApi = {
  subjects: defineRoute({
    method: "GET",
    path: "/api/proxy-sr/subjects",
    level: "nodata",
    summary: "List the registry's subjects (those the caller sees)",
    tags,
    request: { query: QUERY.subjects },
    responses: { 200: registryJson(z.array(z.string())) },
  }),
  versions: defineRoute({
    method: "GET",
    path: "/api/proxy-sr/subjects/{subject}/versions",
    level: "nodata",
    summary: "List the versions of a subject",
    tags,
    request: { params: subjectParam, query: QUERY.versions },
    responses: { 200: registryJson(z.array(z.number().int())) },
  }),
  deleteSubject: defineRoute({
    method: "DELETE",
    path: "/api/proxy-sr/subjects/{subject}",
    level: "write",
    summary: "Delete a subject and its compatibility level (only with schemaRegistry.allowDelete)",
    audit: { type: "SCHEMA", change: "REMOVE" },
    tags,
    request: { params: subjectParam, query: QUERY.remove },
    responses: { 200: registryJson(z.array(z.number().int()), "The versions deleted") },
  }),
  schemaById: defineRoute({
    method: "GET",
    path: "/api/proxy-sr/schemas/ids/{id}",
    level: "nodata",
    summary: "A schema by its integer id (for a scoped caller: held by a subject it sees)",
    tags,
    request: { params: z.object({ id: z.string().describe("1 to 2147483647") }), query: QUERY.byId },
    responses: { 200: registryJson(z.object({ schema: z.string() }).passthrough()) },
  }),
  version: defineRoute({
    method: "GET",
    path: "/api/proxy-sr/subjects/{subject}/versions/{version}",
    level: "nodata",
    summary: "A subject's schema at a version",
    tags,
    request: { params: versionParams, query: QUERY.version },
    responses: { 200: registryJson(versionAnswer) },
  }),
  versionSchema: defineRoute({
    method: "GET",
    path: "/api/proxy-sr/subjects/{subject}/versions/{version}/schema",
    level: "nodata",
    summary: "A subject's schema text at a version, alone",
    tags,
    request: { params: versionParams, query: QUERY.version },
    responses: { 200: registryJson(z.unknown(), "The schema itself (Avro JSON, or JSON Schema)") },
  }),
  register: defineRoute({
    method: "POST",
    path: "/api/proxy-sr/subjects/{subject}/versions",
    level: "write",
    summary: "Register a schema under a subject (the same schema again answers its existing id)",
    audit: { type: "SCHEMA", change: "ADD" },
    tags,
    request: { params: subjectParam, query: QUERY.register, body: schemaBody },
    responses: { 200: registryJson(registerAnswer, "The schema's id") },
  }),
  deleteVersion: defineRoute({
    method: "DELETE",
    path: "/api/proxy-sr/subjects/{subject}/versions/{version}",
    level: "write",
    summary: "Delete one version of a subject (only with schemaRegistry.allowDelete)",
    audit: { type: "SCHEMA", change: "REMOVE" },
    tags,
    request: { params: versionParams, query: QUERY.remove },
    responses: { 200: registryJson(z.number().int(), "The version deleted") },
  }),
  checkCompatibility: defineRoute({
    method: "POST",
    path: "/api/proxy-sr/compatibility/subjects/{subject}/versions/{version}",
    level: "nodata",
    summary: "Check a schema against a subject's version under its compatibility level (changes nothing)",
    tags,
    request: { params: versionParams, query: QUERY.check, body: schemaBody },
    responses: { 200: registryJson(compatibilityAnswer) },
  }),
  putGlobalConfig: defineRoute({
    method: "PUT",
    path: "/api/proxy-sr/config",
    level: "write",
    summary: "Set the global compatibility level (write on every topic of every cluster)",
    audit: { type: "SCHEMA", change: "UPDATE" },
    tags,
    request: { body: compatibilityBody },
    responses: { 200: registryJson(z.record(z.string(), z.unknown()), "The level set") },
  }),
  getGlobalConfig: defineRoute({
    method: "GET",
    path: "/api/proxy-sr/config",
    level: "nodata",
    summary: "The global compatibility level",
    tags,
    responses: { 200: registryJson(levelAnswer) },
  }),
  putSubjectConfig: defineRoute({
    method: "PUT",
    path: "/api/proxy-sr/config/{subject}",
    level: "write",
    summary: "Set a subject's compatibility level",
    audit: { type: "SCHEMA", change: "UPDATE" },
    tags,
    request: { params: subjectParam, body: compatibilityBody },
    responses: { 200: registryJson(z.record(z.string(), z.unknown()), "The level set") },
  }),
  getSubjectConfig: defineRoute({
    method: "GET",
    path: "/api/proxy-sr/config/{subject}",
    level: "nodata",
    summary: "A subject's compatibility level",
    tags,
    request: { params: subjectParam, query: QUERY.subjectConfig },
    responses: { 200: registryJson(levelAnswer) },
  }),
};

/** The validated query as the registry's parameters; those left out by the schema are dropped. */
function queryOf(values: Record<string, string | undefined>): URLSearchParams {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined) q.set(k, v);
  return q;
}

const decoder = new TextDecoder();
/** The registry's answer as JSON (nesting bounded, see util/json.ts); undefined when it is none. */
function jsonOf(answer: UpstreamAnswer): unknown {
  try {
    return parseJson(decoder.decode(answer.body));
  } catch {
    return undefined;
  }
}

/** A host's URL without credentials a configured URL may carry (`http://user:pass@host`). */
function hostOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "unknown";
  }
}

/** A 2xx whose body is not what the registry's API says: the registry's fault, 502. */
const badAnswer = (what: string, answer: UpstreamAnswer) =>
  new AppError("BAD_GATEWAY", `Schema registry at ${hostOf(answer.url)} answered ${what} that is not of the registry's API`);

/**
 * The registry's answer as Loupe's: 2xx as exactly 200 (one client accepts nothing else), the
 * registry's content type; an error keeps its status and the registry's JSON body (whose
 * `error_code` is the registry's own, such as 40401, which Confluent clients read), or gets the
 * COMPAT body when it has none; anything else (a redirect) is 502.
 */
function answerWith(c: Context<AppEnv>, answer: UpstreamAnswer, body?: unknown): Response {
  const contentType = answer.contentType ?? "application/json";
  if (answer.status >= 200 && answer.status < 300)
    return c.body(body === undefined ? (answer.body as Uint8Array<ArrayBuffer>) : JSON.stringify(body), 200, {
      "content-type": contentType,
    });
  // Redirects are not followed (a registry has no reason to send one, and it could point anywhere).
  if (answer.status < 400) throw new AppError("BAD_GATEWAY", `Schema registry at ${hostOf(answer.url)} answered ${answer.status}`);
  const parsed = jsonOf(answer) as { message?: unknown } | undefined;
  if (parsed && typeof parsed === "object" && typeof parsed.message === "string")
    return c.body(answer.body as Uint8Array<ArrayBuffer>, answer.status as 400, { "content-type": contentType });
  const text = decoder.decode(answer.body).trim().slice(0, 500);
  return c.json(
    {
      error_code: answer.status,
      message: text ? `Schema registry answered ${answer.status}: ${text}` : `Schema registry answered ${answer.status}`,
      code: "REGISTRY_ERROR",
      requestId: c.get("requestId"),
    },
    answer.status as 400,
  );
}

/** What an audited change's entry says about the registry's answer. */
function outcomeOf(answer: UpstreamAnswer): Record<string, string> {
  const out: Record<string, string> = { registryStatus: String(answer.status), registryHost: hostOf(answer.url) };
  if (answer.status >= 400) {
    const message = (jsonOf(answer) as { message?: unknown } | undefined)?.message;
    if (typeof message === "string") out.registryMessage = message.slice(0, 500);
  }
  return out;
}

export interface SchemaRouteDeps {
  proxy: SchemaProxyService;
  /** Records the refusals of the reading routes (ACCESS DENY); the guard records the changes'. */
  audit: AuditService;
  /** The configured Kafka clusters: a subject's change is checked on each (see subject-scope.ts). */
  clusters: () => readonly string[];
}

/** The role seeing a subject needs: the level of the routes that read one. */
const SEE = schemaApi.version.access.level as Role;

export function schemaRoutes({ proxy, audit, clusters }: SchemaRouteDeps) {
  const app = new RouteGroup();

  const send = (c: Context<AppEnv>, call: Omit<RegistryCall, "contentType" | "accept" | "signal">) =>
    proxy.send({ ...call, contentType: c.req.header("content-type"), accept: c.req.header("accept"), signal: c.req.raw.signal });

  /** The caller's rights over subjects, on the request's cluster. */
  const accessOf = (c: Context<AppEnv>) => new SubjectAccess(c.get("session")!.scope, clusterOf(c), clusters());
  /** The role the route asks (its level): what it needs on a subject's topic. */
  const roleOf = (c: Context<AppEnv>): Role => {
    const level = c.get("rule")?.level;
    if (level === "admin" || level === "write" || level === "read" || level === "nodata") return level;
    throw new AppError("INTERNAL", `The route ${c.req.method} ${c.req.path} has no role level`);
  };

  /** 403 with the refusal's words, its subject and topic in the audit entry (see `refuse`). */
  const refuseSubject = (c: Context<AppEnv>, refusal: SubjectRefusal, content: Record<string, string>): Promise<never> =>
    refuse(c, audit, refusal.message, { ...content, ...(refusal.topic !== undefined ? { topic: refusal.topic } : {}) });
  const see = async (c: Context<AppEnv>, subject: string) => {
    const refused = accessOf(c).seeRefusal(subject, roleOf(c));
    if (refused) await refuseSubject(c, refused, { subject });
  };
  const change = async (c: Context<AppEnv>, subject: string) => {
    const refused = accessOf(c).changeRefusal(subject, roleOf(c));
    if (refused) await refuseSubject(c, refused, { subject });
  };
  /**
   * A schema sent (registered or checked) may reference only subjects the caller sees: the
   * registry reads them to parse it, and its answer (an error, a compatibility verdict) would
   * tell of them; a reference also pins the version it names against deletion.
   */
  const seeReferences = async (c: Context<AppEnv>, subject: string, body: z.output<typeof schemaBody>) => {
    const access = accessOf(c);
    for (const ref of body.references ?? []) {
      const refused = access.seeRefusal(ref.subject, SEE);
      if (refused)
        await refuseSubject(
          c,
          { ...refused, message: `Reference '${ref.name}' of subject '${subject}': ${refused.message}` },
          {
            subject,
            reference: ref.subject,
          },
        );
    }
  };

  app.handle(schemaApi.subjects, async (c) => {
    const answer = await send(c, { method: "GET", path: "/subjects", query: queryOf(c.req.valid("query")) });
    const access = accessOf(c);
    const role = roleOf(c);
    if (answer.status >= 300 || access.coversEverything(role)) return answerWith(c, answer);
    const names = jsonOf(answer);
    if (!Array.isArray(names) || names.some((n) => typeof n !== "string")) throw badAnswer("a subject list", answer);
    return answerWith(c, answer, access.visible(names as string[], role));
  });

  app.handle(schemaApi.versions, async (c) => {
    const { subject } = c.req.valid("param");
    const segment = subjectSegment(subject);
    await see(c, subject);
    return answerWith(c, await send(c, { method: "GET", path: `/subjects/${segment}/versions`, query: queryOf(c.req.valid("query")) }));
  });

  app.handle(schemaApi.deleteSubject, async (c) => {
    const { subject } = c.req.valid("param");
    const path = `/subjects/${subjectSegment(subject)}`;
    const query = c.req.valid("query");
    proxy.requireDelete();
    await change(c, subject);
    const answer = await send(c, { method: "DELETE", path, query: queryOf(query) });
    const versions = jsonOf(answer);
    c.set("auditContent", {
      subject,
      permanent: query.permanent ?? "false",
      ...(answer.status < 300 && Array.isArray(versions) ? { versions: versions.join(",") } : {}),
      ...outcomeOf(answer),
    });
    return answerWith(c, answer);
  });

  /**
   * A schema by id names no subject. A caller who does not see every subject gets it when one
   * of the subjects holding it (soft-deleted ones included: records written before still carry
   * the id) is one they see, asked of the registry first: ids are small consecutive integers,
   * and without this a scoped caller could read every schema by counting.
   */
  app.handle(schemaApi.schemaById, async (c) => {
    const id = schemaIdSegment(c.req.valid("param").id);
    const query = c.req.valid("query");
    const access = accessOf(c);
    const role = roleOf(c);
    if (!access.coversEverything(role)) {
      if (query.subject !== undefined) await see(c, query.subject);
      const holders = await send(c, {
        method: "GET",
        path: `/schemas/ids/${id}/versions`,
        query: new URLSearchParams({ deleted: "true" }),
      });
      if (holders.status >= 300) return answerWith(c, holders);
      const found = jsonOf(holders);
      if (!Array.isArray(found)) throw badAnswer("the subjects of a schema", holders);
      const subjects = found.map((v) => (v as { subject?: unknown } | null)?.subject).filter((s): s is string => typeof s === "string");
      if (access.visible(subjects, role).length === 0)
        await refuseSubject(c, { message: `Schema ${id} is registered under no subject you may see` }, { id });
    }
    return answerWith(c, await send(c, { method: "GET", path: `/schemas/ids/${id}`, query: queryOf(query) }));
  });

  app.handle(schemaApi.version, async (c) => {
    const { subject, version } = c.req.valid("param");
    const path = `/subjects/${subjectSegment(subject)}/versions/${versionSegment(version)}`;
    await see(c, subject);
    return answerWith(c, await send(c, { method: "GET", path, query: queryOf(c.req.valid("query")) }));
  });

  app.handle(schemaApi.versionSchema, async (c) => {
    const { subject, version } = c.req.valid("param");
    const path = `/subjects/${subjectSegment(subject)}/versions/${versionSegment(version)}/schema`;
    await see(c, subject);
    return answerWith(c, await send(c, { method: "GET", path, query: queryOf(c.req.valid("query")) }));
  });

  /**
   * The version a registered schema has, for the audit entry only (the register answer names
   * just the id): the registry's lookup of the schema under the subject. Nothing when the
   * lookup fails; the register stands either way.
   */
  const versionOf = async (c: Context<AppEnv>, subjectPath: string, query: URLSearchParams): Promise<{ version?: string }> => {
    try {
      const found = await send(c, { method: "POST", path: subjectPath, query, body: await c.req.text() });
      const version = (jsonOf(found) as { version?: unknown } | undefined)?.version;
      return found.status < 300 && typeof version === "number" ? { version: String(version) } : {};
    } catch {
      return {};
    }
  };

  // Registering the same schema again answers its existing id and adds no version, so a
  // register sent again to the next host after a timeout cannot create a second one.
  app.handle(schemaApi.register, async (c) => {
    const { subject } = c.req.valid("param");
    const body = c.req.valid("json");
    const subjectPath = `/subjects/${subjectSegment(subject)}`;
    const query = queryOf(c.req.valid("query"));
    await change(c, subject);
    await seeReferences(c, subject, body);
    const answer = await send(c, { method: "POST", path: `${subjectPath}/versions`, query, body: await c.req.text() });
    const id = (jsonOf(answer) as { id?: unknown } | undefined)?.id;
    const registered = answer.status < 300 && typeof id === "number";
    c.set("auditContent", {
      subject,
      schemaType: body.schemaType ?? "AVRO",
      ...(registered ? { id: String(id), ...(await versionOf(c, subjectPath, query)) } : {}),
      ...outcomeOf(answer),
    });
    if (answer.status >= 300) return answerWith(c, answer);
    if (typeof id !== "number" || !Number.isInteger(id)) throw badAnswer("a registration", answer);
    return answerWith(c, answer, { id });
  });

  app.handle(schemaApi.deleteVersion, async (c) => {
    const { subject, version } = c.req.valid("param");
    const query = c.req.valid("query");
    const path = `/subjects/${subjectSegment(subject)}/versions/${versionSegment(version)}`;
    proxy.requireDelete();
    await change(c, subject);
    const answer = await send(c, { method: "DELETE", path, query: queryOf(query) });
    const deleted = jsonOf(answer);
    c.set("auditContent", {
      subject,
      version: answer.status < 300 && typeof deleted === "number" ? String(deleted) : version,
      permanent: query.permanent ?? "false",
      ...outcomeOf(answer),
    });
    return answerWith(c, answer);
  });

  app.handle(schemaApi.checkCompatibility, async (c) => {
    const { subject, version } = c.req.valid("param");
    const path = `/compatibility/subjects/${subjectSegment(subject)}/versions/${versionSegment(version)}`;
    // What a check answers tells of the subject's schemas and level: it needs what reading them needs.
    await see(c, subject);
    await seeReferences(c, subject, c.req.valid("json"));
    return answerWith(c, await send(c, { method: "POST", path, query: queryOf(c.req.valid("query")), body: await c.req.text() }));
  });

  const putLevel = async (c: Context<AppEnv>, path: string, level: string, subject?: string) => {
    let answer = await send(c, { method: "PUT", path, body: JSON.stringify({ compatibility: level }) });
    // Apicurio keeps NONE as "no rule", and answers 404 to setting NONE where no rule is set:
    // the level asked for is the level in force, which is a success.
    if (level === "NONE" && answer.status === 404 && /No rule named 'COMPATIBILITY'/.test(decoder.decode(answer.body)))
      answer = { ...answer, status: 200, body: new Uint8Array(0) };
    c.set("auditContent", { ...(subject !== undefined ? { subject } : { scope: "global" }), compatibility: level, ...outcomeOf(answer) });
    // One client reads a JSON body from every PUT, even one it discards.
    if (answer.status < 300 && jsonOf(answer) === undefined) return answerWith(c, answer, { compatibility: level });
    return answerWith(c, answer);
  };
  // The global level is the level of every subject without its own: of every topic of every cluster.
  app.handle(schemaApi.putGlobalConfig, async (c) => {
    const role = roleOf(c);
    if (!accessOf(c).coversEverything(role))
      await refuseSubject(
        c,
        {
          message: `The global compatibility level applies to every subject: only an identity with ${role} on every topic of every cluster may change it`,
        },
        { scope: "global" },
      );
    return putLevel(c, "/config", c.req.valid("json").compatibility);
  });
  app.handle(schemaApi.putSubjectConfig, async (c) => {
    const { subject } = c.req.valid("param");
    const segment = subjectSegment(subject);
    await change(c, subject);
    return putLevel(c, `/config/${segment}`, c.req.valid("json").compatibility, subject);
  });

  /** `{compatibilityLevel}` and nothing else: the Python client compares the whole answer. */
  const getLevel = async (c: Context<AppEnv>, path: string, query?: URLSearchParams) => {
    const answer = await send(c, { method: "GET", path, ...(query ? { query } : {}) });
    if (answer.status >= 300) return answerWith(c, answer);
    const body = jsonOf(answer) as { compatibilityLevel?: unknown; compatibility?: unknown } | undefined;
    const level = body?.compatibilityLevel ?? body?.compatibility;
    if (typeof level !== "string") throw badAnswer("a compatibility level", answer);
    return answerWith(c, answer, { compatibilityLevel: level });
  };
  app.handle(schemaApi.getGlobalConfig, (c) => getLevel(c, "/config"));
  app.handle(schemaApi.getSubjectConfig, async (c) => {
    const { subject } = c.req.valid("param");
    const segment = subjectSegment(subject);
    await see(c, subject);
    return getLevel(c, `/config/${segment}`, queryOf(c.req.valid("query")));
  });

  return app;
}
