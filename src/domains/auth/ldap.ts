/**
 * Login against an LDAP directory (OpenLDAP, Active Directory): search-then-bind.
 *
 * The service account finds the one entry the user's name matches, then a connection of its
 * own binds as that entry with the typed password; the user's groups are read with the service
 * account, from `memberOf` or a group search, and mapped to Loupe groups.
 *
 * What it guards against, each with a test against a real slapd:
 * - an empty password is refused before any bind: a directory answers a simple bind with a DN
 *   and no password as an anonymous bind, with success (RFC 4513 5.1.2);
 * - the name is escaped (RFC 4515) before it enters the filter, so `*`, `)(`, `\` match nothing;
 * - a name that matches several entries logs no one in;
 * - an unknown name and a wrong password do the same work (a bind against a DN that does not
 *   exist stands in for the missing user's), so time does not tell them apart;
 * - a directory that is down, slow or refuses the service account fails closed (503) within
 *   connectTimeout + timeout, whatever step it stalls in;
 * - the typed name is logged only once it resolved to an entry (a password typed into the name
 *   field stays out of the logs); passwords never reach a log line or an error.
 *
 * Every login or lookup opens its own connections and closes them: no connection outlives the
 * operation, so one bound as a user can never be used as the service account, and a directory
 * that restarted needs no reconnect logic.
 */

import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import type { ConnectionOptions } from "node:tls";
import { Client, type Entry, type Filter, FilterParser, InvalidCredentialsError, NoSuchObjectError, ResultCodeError } from "ldapts";
import type { LdapConfig } from "../../config/ldap.ts";
import { AppError } from "../../errors.ts";
import type { Logger } from "../../log/logger.ts";

export interface DirectoryUser {
  /**
   * The login name as the directory holds it: the value of the first attribute the user filter
   * compares with `{user}` (`carol` for `Carol`, or for `carol@x` with `(|(uid={user})(mail={user}))`).
   */
  name: string;
  dn: string;
  email: string | null;
  /** DNs of the user's directory groups, sorted. */
  directoryGroups: string[];
  /** Loupe group names: mapped from directoryGroups, plus defaultGroups; deduped, sorted. */
  groups: string[];
}

/**
 * RFC 4515 value encoding: `\`, `*`, `(`, `)` and NUL must be escaped; control characters and
 * every byte of a non-ASCII character are escaped too (as `\XX` of their UTF-8 bytes), so the
 * filter text is plain printable ASCII whatever the name holds.
 */
export function escapeFilterValue(value: string): string {
  let out = "";
  for (const byte of Buffer.from(value, "utf8")) {
    const safe = byte >= 0x20 && byte < 0x7f && byte !== 0x2a && byte !== 0x28 && byte !== 0x29 && byte !== 0x5c;
    out += safe ? String.fromCharCode(byte) : `\\${byte.toString(16).padStart(2, "0")}`;
  }
  return out;
}

/** Non-ASCII characters of a filter template as `\XX` UTF-8 bytes, like escaped values (see parseFilter). */
function escapeNonAscii(text: string): string {
  return text.replace(/[\u0080-\uffff]+/g, (run) => [...Buffer.from(run, "utf8")].map((b) => `\\${b.toString(16)}`).join(""));
}

type ValueFilter = Filter & { value?: unknown; initial?: string; any?: string[]; final?: string; filters?: Filter[]; filter?: Filter };

/**
 * ldapts's filter parser turns each `\XX` into the character of code XX, so the bytes of an
 * escaped UTF-8 character come out as several Latin-1 characters and would be sent encoded
 * twice. With every non-ASCII character escaped (escapeNonAscii, escapeFilterValue), each
 * value is a byte string: read it back as UTF-8.
 */
function decodeFilterValues(f: ValueFilter): void {
  const utf8 = (s: string) => Buffer.from(s, "latin1").toString("utf8");
  if (typeof f.value === "string") f.value = utf8(f.value);
  if (typeof f.initial === "string") f.initial = utf8(f.initial);
  if (typeof f.final === "string") f.final = utf8(f.final);
  if (Array.isArray(f.any)) f.any = f.any.map(utf8);
  for (const child of f.filters ?? []) decodeFilterValues(child);
  if (f.filter) decodeFilterValues(f.filter);
}

/** The filter of `template` with each `{key}` replaced by its escaped value. */
function parseFilter(template: string, values: Record<string, string>): Filter {
  const text = escapeNonAscii(template).replace(/\{(user|dn)\}/g, (m, key: string) =>
    values[key] === undefined ? m : escapeFilterValue(values[key]),
  );
  const filter = FilterParser.parseString(text);
  decodeFilterValues(filter);
  return filter;
}

interface Ava {
  type: string;
  value: string;
}

/** A DN's RDNs, each a list of attribute-value pairs with values unescaped (RFC 4514). */
function parseDn(dn: string): Ava[][] {
  const rdns: Ava[][] = [];
  let avas: Ava[] = [];
  let type = "";
  let bytes: number[] = [];
  let inValue = false;
  // Unescaped spaces at either end of a value are not part of it; escaped ones are.
  let trailing = 0;
  const push = (b: number[], significant: boolean) => {
    if (!significant && bytes.length === 0) return;
    bytes.push(...b);
    trailing = significant ? 0 : trailing + b.length;
  };
  const endAva = () => {
    const value = Buffer.from(bytes.slice(0, bytes.length - trailing)).toString("utf8");
    avas.push({ type: type.trim().toLowerCase(), value });
    type = "";
    bytes = [];
    trailing = 0;
    inValue = false;
  };
  for (let i = 0; i < dn.length; i++) {
    const c = dn[i]!;
    if (!inValue) {
      if (c === "=") inValue = true;
      else type += c;
      continue;
    }
    if (c === "\\") {
      const hex = dn.slice(i + 1, i + 3);
      if (/^[0-9a-f]{2}$/i.test(hex)) {
        push([Number.parseInt(hex, 16)], true);
        i += 2;
      } else if (i + 1 < dn.length) {
        push([...Buffer.from(dn[i + 1]!, "utf8")], true);
        i += 1;
      }
    } else if (c === "+") {
      endAva();
    } else if (c === "," || c === ";") {
      endAva();
      rdns.push(avas);
      avas = [];
    } else {
      push([...Buffer.from(c, "utf8")], c !== " ");
    }
  }
  if (inValue || type.trim()) {
    endAva();
    rdns.push(avas);
  }
  return rdns;
}

/** DNs compare as the directory does: types and values case-insensitively, insignificant spaces ignored. */
function normalizeDn(dn: string): string {
  return parseDn(dn)
    .map((avas) =>
      avas
        .map((a) => `${a.type}=${a.value.toLowerCase().replace(/\s+/g, " ")}`)
        .sort()
        .join("+"),
    )
    .join("\u0000");
}

/** A directory entry's values of `attribute` as text (attribute names are case-insensitive). */
function values(entry: Entry, attribute: string): string[] {
  const key = Object.keys(entry).find((k) => k !== "dn" && k.toLowerCase() === attribute.toLowerCase());
  if (!key) return [];
  const v = entry[key]!;
  return (Array.isArray(v) ? v : [v]).map((x) => (Buffer.isBuffer(x) ? x.toString("utf8") : String(x)));
}

/** What may be said in a log line about a failure: the error's kind and message, with secrets cut out. */
function describeError(err: unknown, secrets: string[]): string {
  let text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  for (const s of secrets) if (s) text = text.split(s).join("[redacted]");
  return text;
}

const MAX_NAME_LENGTH = 512;
const UNAVAILABLE_MESSAGE = "The login directory is unavailable; try again later";

class Unavailable extends Error {}

/** The connections of one login or lookup, all closed when it ends or runs out of time. */
class Operation {
  readonly clients = new Set<Client>();
  /** The URL the service account bound to: the user's bind goes to the same server. */
  url = "";
  expired = false;
  /**
   * Closes the connected clients. One still connecting is kept: the deadline may pass while a
   * connection is being opened, and the close after the work has settled catches it.
   */
  close(): Promise<void> {
    const connected = [...this.clients].filter((c) => c.isConnected);
    for (const c of connected) this.clients.delete(c);
    return Promise.all(connected.map((c) => c.unbind().catch(() => {}))).then(() => {});
  }
}

export class LdapDirectory {
  private readonly bindPassword: string;
  private readonly tls: ConnectionOptions | undefined;
  private readonly now: () => number;
  /** The attribute the user filter matches the name against, when it names one: gives the name's spelling. */
  private readonly nameAttribute: string | null;
  private readonly mappingsByDn = new Map<string, string[]>();
  private readonly mappingsByName = new Map<string, string[]>();
  private readonly operations = new Set<Promise<unknown>>();
  private closed = false;

  constructor(
    private readonly cfg: LdapConfig,
    private readonly log: Logger,
    opts: { now?: () => number } = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.bindPassword = cfg.bindPassword ?? readFileSync(cfg.bindPasswordFile!, "utf8").replace(/\r?\n$/, "");
    if (!this.bindPassword) throw new Error("ldap.bindPasswordFile is empty");
    const ca = cfg.ca === undefined ? undefined : readFileSync(cfg.ca);
    const secure = cfg.startTls || cfg.url.some((u) => /^ldaps:/i.test(u));
    this.tls = secure ? { ...(ca ? { ca: [ca] } : {}), rejectUnauthorized: cfg.rejectUnauthorized } : undefined;
    // Invalid filters stop start-up, rather than every login.
    for (const [key, template] of [
      ["userFilter", cfg.userFilter],
      ["groups.filter", cfg.groups.filter],
    ] as const) {
      try {
        parseFilter(template, { user: "x", dn: "cn=x" });
      } catch (err) {
        throw new Error(`ldap.${key} is not a valid LDAP filter: ${(err as Error).message}`);
      }
    }
    this.nameAttribute = /\(\s*([A-Za-z][\w-]*)\s*=\s*\{user\}\s*\)/.exec(cfg.userFilter)?.[1] ?? null;
    for (const [key, groups] of Object.entries(cfg.groupMappings)) {
      const map = key.includes("=") ? this.mappingsByDn : this.mappingsByName;
      const norm = key.includes("=") ? normalizeDn(key) : key.trim().toLowerCase();
      map.set(norm, [...(map.get(norm) ?? []), ...groups]);
    }
  }

  async authenticate(name: string, password: string): Promise<DirectoryUser | null> {
    // Before any connection: with no password the directory would answer an anonymous bind.
    if (name === "" || password === "") {
      this.log.info("LDAP login refused: empty name or password");
      return null;
    }
    // No directory holds such a name; saying so early tells nothing about who exists.
    if (name.length > MAX_NAME_LENGTH) return null;
    return this.run("login", [password, name], async (op) => {
      const svc = await this.serviceClient(op);
      const entries = await this.findUser(svc, name);
      // A DN no entry has: an unknown name costs the same bind as a known one.
      const target = entries.length === 1 ? entries[0]!.dn : `cn=loupe-no-such-user-${randomBytes(8).toString("hex")},${this.cfg.userBase}`;
      const bound = await this.userBind(op, target, password);
      if (entries.length === 0) {
        this.log.info("LDAP login failed: unknown user or wrong password");
        return null;
      }
      if (entries.length > 1) {
        this.log.warn("LDAP login refused: the name matches more than one entry", { dns: entries.map((e) => e.dn) });
        return null;
      }
      const spelled = this.spelling(entries[0]!, name);
      if (!bound) {
        this.log.info("LDAP login failed: wrong password", { user: spelled });
        return null;
      }
      const user = await this.toUser(svc, entries[0]!, spelled);
      this.log.info("LDAP login", { user: user.name, groups: user.groups });
      return user;
    });
  }

  async lookup(name: string): Promise<DirectoryUser | null> {
    if (name === "" || name.length > MAX_NAME_LENGTH) return null;
    return this.run("lookup", [], async (op) => {
      const svc = await this.serviceClient(op);
      const entries = await this.findUser(svc, name);
      if (entries.length !== 1) {
        this.log.info(entries.length ? "LDAP user matches more than one entry now" : "LDAP user is gone from the directory", {
          user: name,
        });
        return null;
      }
      return this.toUser(svc, entries[0]!, this.spelling(entries[0]!, name));
    });
  }

  /** Stops new operations and waits for those under way (each ends by its deadline). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.operations]);
  }

  /**
   * Runs one login or lookup against the deadline: its connections are closed when it ends,
   * and torn down when the deadline passes first, which answers UNAVAILABLE.
   */
  private async run<T>(what: string, secrets: string[], work: (op: Operation) => Promise<T>): Promise<T> {
    if (this.closed) throw new AppError("UNAVAILABLE", UNAVAILABLE_MESSAGE);
    const op = new Operation();
    const limit = this.cfg.connectTimeout + this.cfg.timeout;
    const t0 = this.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        op.expired = true;
        reject(new Unavailable(`no answer within ${limit} ms`));
      }, limit);
    });
    const task = work(op);
    const done = Promise.race([task, deadline]);
    this.operations.add(done);
    try {
      return await done;
    } catch (err) {
      if (err instanceof AppError) throw err;
      this.log.warn(`LDAP ${what} failed: the directory is unavailable`, {
        error: describeError(err, [this.bindPassword, ...secrets]),
        url: op.url || this.cfg.url.join(" "),
        ms: this.now() - t0,
      });
      throw new AppError("UNAVAILABLE", UNAVAILABLE_MESSAGE);
    } finally {
      clearTimeout(timer);
      this.operations.delete(done);
      // Not awaited: the answer never waits on a directory that stopped answering; close() does.
      void op.close();
      // After a deadline the work goes on until its step times out, and may open a connection
      // meanwhile: close again once it has settled.
      const settled = task.then(
        () => op.close(),
        () => op.close(),
      );
      this.operations.add(settled);
      void settled.finally(() => this.operations.delete(settled));
    }
  }

  /** A connection to `url` (TLS as configured), registered with the operation. */
  private async connect(op: Operation, url: string): Promise<Client> {
    if (op.expired) throw new Unavailable("deadline passed");
    const ldaps = /^ldaps:/i.test(url);
    const client = new Client({
      url,
      timeout: this.cfg.timeout,
      connectTimeout: this.cfg.connectTimeout,
      // tlsOptions on an ldap:// client would make ldapts speak TLS from the first byte.
      ...(ldaps && this.tls ? { tlsOptions: { ...this.tls } } : {}),
    });
    op.clients.add(client);
    // ldapts does not time the TLS upgrade itself: the operation's deadline covers it.
    if (this.cfg.startTls) await client.startTLS({ ...this.tls });
    return client;
  }

  /** Bound as the service account, on the first URL that answers. */
  private async serviceClient(op: Operation): Promise<Client> {
    let lastError: unknown;
    for (const url of this.cfg.url) {
      op.url = url;
      try {
        const client = await this.connect(op, url);
        await client.bind(this.cfg.bindDn, this.bindPassword);
        return client;
      } catch (err) {
        // The directory answered and said no: another server of it would say the same.
        if (err instanceof ResultCodeError) {
          this.log.error("LDAP service account bind refused", {
            bindDn: this.cfg.bindDn,
            url,
            error: describeError(err, [this.bindPassword]),
          });
          throw new AppError("UNAVAILABLE", UNAVAILABLE_MESSAGE);
        }
        lastError = err;
        if (op.expired) break;
        if (this.cfg.url.length > 1)
          this.log.warn("LDAP server unreachable, trying the next", { url, error: describeError(err, [this.bindPassword]) });
      }
    }
    throw lastError;
  }

  /** At most two entries: two already mean the name is ambiguous. */
  private async findUser(svc: Client, name: string): Promise<Entry[]> {
    const attributes = [this.cfg.emailAttribute, ...(this.cfg.groups.source === "memberOf" ? ["memberOf"] : [])];
    if (this.nameAttribute) attributes.push(this.nameAttribute);
    try {
      const { searchEntries } = await svc.search(this.cfg.userBase, {
        scope: "sub",
        filter: parseFilter(this.cfg.userFilter, { user: name }),
        attributes,
        sizeLimit: 2,
        timeLimit: Math.max(1, Math.ceil(this.cfg.timeout / 1000)),
      });
      return searchEntries;
    } catch (err) {
      // A missing base is a configuration error, not an unknown user: every login would fail.
      if (err instanceof NoSuchObjectError) this.log.error("LDAP userBase does not exist", { userBase: this.cfg.userBase });
      throw new Unavailable(`user search failed: ${err instanceof Error ? err.name : "error"}`);
    }
  }

  /** True when `dn` binds with `password`, on a connection of its own that is closed at once. */
  private async userBind(op: Operation, dn: string, password: string): Promise<boolean> {
    const client = await this.connect(op, op.url);
    try {
      await client.bind(dn, password);
      return true;
    } catch (err) {
      if (err instanceof InvalidCredentialsError) return false;
      // Any other answer of the directory (locked, must change password, ...) is a refusal too.
      if (err instanceof ResultCodeError) {
        this.log.info("LDAP bind refused", { code: err.code });
        return false;
      }
      throw err;
    } finally {
      op.clients.delete(client);
      await client.unbind().catch(() => {});
    }
  }

  /**
   * The name as the directory spells it (`alice` for `Alice` or `alice `: the directory matches
   * names case-insensitively and ignores surrounding spaces), so one person is one Loupe user.
   */
  private spelling(entry: Entry, typed: string): string {
    if (!this.nameAttribute) return typed;
    const norm = (s: string) => s.trim().replace(/\s+/g, " ").toLowerCase();
    const all = values(entry, this.nameAttribute);
    return all.find((v) => norm(v) === norm(typed)) ?? (all.length === 1 ? all[0]! : typed);
  }

  private async toUser(svc: Client, entry: Entry, name: string): Promise<DirectoryUser> {
    const groups = await this.directoryGroups(svc, entry, name);
    const loupe = new Set(this.cfg.defaultGroups);
    for (const g of groups) {
      for (const n of this.mappingsByDn.get(normalizeDn(g.dn)) ?? []) loupe.add(n);
      for (const groupName of g.names) for (const n of this.mappingsByName.get(groupName.toLowerCase()) ?? []) loupe.add(n);
    }
    return {
      name,
      dn: entry.dn,
      email: values(entry, this.cfg.emailAttribute)[0] ?? null,
      directoryGroups: groups.map((g) => g.dn).sort(),
      groups: [...loupe].sort(),
    };
  }

  /** Each directory group's DN and its names (values of groups.nameAttribute). */
  private async directoryGroups(svc: Client, entry: Entry, name: string): Promise<{ dn: string; names: string[] }[]> {
    const nameAttribute = this.cfg.groups.nameAttribute;
    const search = async (base: string, scope: "base" | "sub", filter?: Filter) => {
      try {
        // Paged: a directory caps one answer (Active Directory at 1000 entries by default).
        const paging = scope === "sub" ? { paged: { pageSize: 500 } } : {};
        return (await svc.search(base, { scope, ...(filter ? { filter } : {}), ...paging, attributes: [nameAttribute] })).searchEntries;
      } catch (err) {
        // A group deleted between reading memberOf and reading it has no name to map.
        if (err instanceof NoSuchObjectError && scope === "base") return [];
        throw new Unavailable(`group search failed: ${err instanceof Error ? err.name : "error"}`);
      }
    };
    if (this.cfg.groups.source === "search") {
      const filter = parseFilter(this.cfg.groups.filter, { dn: entry.dn, user: name });
      const found = await search(this.cfg.groups.base!, "sub", filter);
      return found.map((g) => ({ dn: g.dn, names: values(g, nameAttribute) }));
    }
    const out: { dn: string; names: string[] }[] = [];
    for (const dn of values(entry, "memberOf")) {
      // The usual case (cn=<name>,...) needs no read of the group itself.
      const first = parseDn(dn)[0] ?? [];
      const named = first.filter((a) => a.type === nameAttribute.toLowerCase()).map((a) => a.value);
      if (named.length) out.push({ dn, names: named });
      else out.push({ dn, names: (await search(dn, "base")).flatMap((g) => values(g, nameAttribute)) });
    }
    return out;
  }
}
