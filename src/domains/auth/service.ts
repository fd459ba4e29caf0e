import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Role, UserConfig } from "../../config/schema.ts";
import type { Db } from "../../db/index.ts";
import { AppError } from "../../errors.ts";
import type { RequestSession } from "../../http/context.ts";
import type { Logger } from "../../log/logger.ts";
import type { InternalTopics } from "../access/internal-topics.ts";
import { compileScope, type Group, type Scope } from "../access/scope.ts";
import { describeHolder, type NameHolder, nameKey, storeHolder } from "./names.ts";
import { LoginThrottle } from "./throttle.ts";

/** Where an identity comes from: a local user (config file or store), the directory, or a service account. */
export type IdentityKind = "local" | "ldap" | "service";

export interface User {
  id: string;
  name: string;
  email: string | null;
  /** Every role the identity holds anywhere (its groups' and its own); what is allowed where is the scope's. */
  roles: Role[];
  /** The Loupe groups it belongs to. */
  groups: string[];
  kind: IdentityKind;
}

/** A signed-in identity: what http reads of it (RequestSession), and more. */
export interface Session extends RequestSession {
  user: User;
  /** What the identity may do on which cluster and topic: the union over its groups. */
  scope: Scope;
  tokenHash: string;
  createdAt: number;
  expiresAt: number;
  lastUsedAt: number;
}

// The request context's session is this one (http reads it through its RequestSession port).
declare module "../../http/context.ts" {
  interface SessionTypes {
    session: Session;
  }
}

export interface AuthSettings {
  tokenLifetimeMs: number;
  idleTimeoutMs: number;
  maxFailedLogins: number;
  failedLoginWindowMs: number;
}

/** A directory user after a successful bind or a lookup (see src/domains/auth/ldap.ts). */
export interface DirectoryUser {
  name: string;
  email: string | null;
  /** Loupe group names, mapped from the directory's groups. */
  groups: string[];
}

/** The directory logins are checked against when the name is no local user. */
export interface Directory {
  /** Null when name and password do not match; throws UNAVAILABLE when the directory cannot answer. */
  authenticate(name: string, password: string): Promise<DirectoryUser | null>;
  /** The user's current groups; null when the user is gone. Throws when the directory cannot answer. */
  lookup(name: string): Promise<DirectoryUser | null>;
  /** How often a live directory token's groups are read again. */
  readonly refreshMs: number;
}

/** Time and waiting, injectable so tests advance a clock instead of sleeping. */
export interface AuthOptions {
  now?: () => number;
  delay?: (ms: number) => Promise<void>;
  /**
   * How long a token, user, group or service account read from the store is used before it is
   * read again (default STORE_TTL_MS). 0 on a store other instances share: what one changes
   * (a logout, a disabled user, a group's roles) applies on every other at its next request.
   */
  storeTtlMs?: number;
}

/** What identities are resolved with besides the store: groups (config and store) and the directory. */
export interface IdentityDeps {
  /** The groups of these names that exist (unknown names grant nothing). */
  groups?: (names: readonly string[]) => Promise<Group[]>;
  directory?: Directory;
  /** The internal topics, on which only an unrestricted admin holds more than `nodata`. */
  internalTopics?: InternalTopics;
}

/** Called when tokens stop working: one token (logout), or null when any may have (users changed). */
export type RevokeListener = (tokenHash: string | null, reason: string) => void;

/** A hash to verify against when the user does not exist, so both failures cost the same time. */
let dummyHash: Promise<string> | undefined;
const getDummyHash = () => (dummyHash ??= Bun.password.hash(randomBytes(16).toString("hex"), "argon2id"));

export const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

export async function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, "argon2id");
}

type Source = "config" | "store" | "ldap";

/** What a token says: whose it is and when it ends. Roles are never taken from it. */
interface TokenEntry {
  userName: string;
  source: Source;
  createdAt: number;
  expiresAt: number;
  lastUsedAt: number;
  persistedLastUse: number;
  /** When the row was last read from the store: read again after the store TTL, for a revocation made elsewhere. */
  checkedAt: number;
  /** A directory login's groups and when they were read. */
  groups?: string[];
  groupsAt?: number;
  /** A re-read of the directory in flight, so concurrent requests wait for one. */
  refreshing?: Promise<void>;
}

/** A local user's record: its own roles (applying everywhere) and its groups. */
interface LocalUser {
  name: string;
  email: string | null;
  roles: Role[];
  groups: string[];
  disabled: boolean;
  passwordHash: string;
}

/** A service account's record, as authentication reads it. */
interface ServiceAccountRecord {
  name: string;
  secretHash: string;
  groups: string[];
  expiresAt: number | null;
  disabled: boolean;
  createdAt: number;
}

/**
 * Store records (users, service accounts, groups) are re-read after this long, so a change
 * written to the store by other means than Loupe's API applies within it; changes made through
 * the API apply at once (`accessChanged`).
 */
export const STORE_TTL_MS = 1_000;

/** The `expiresAt` of a service account that never expires, as the session answer gives it (9999-12-31). */
export const NEVER = 253_402_300_799_000;

/** A service account token: `name:secret`. Login tokens are base64url and hold no colon. */
const SERVICE_TOKEN = /^([A-Za-z0-9][A-Za-z0-9._-]{0,99}):([A-Za-z0-9_-]{16,200})$/;

/** The implicit group of a user's own roles: every cluster, every topic. Its name is no valid group name. */
const ownRolesGroup = (roles: readonly Role[]): Group => ({
  name: "(own roles)",
  roles: [...roles],
  clusters: ["*"],
  topics: { allow: ["*"], deny: [] },
});

/** The cache entry of a token issued now. */
function newEntry(userName: string, source: Source, now: number, expiresAt: number, groups: readonly string[] | undefined): TokenEntry {
  return {
    userName,
    source,
    createdAt: now,
    expiresAt,
    lastUsedAt: now,
    persistedLastUse: now,
    checkedAt: now,
    ...(groups ? { groups: [...groups], groupsAt: now } : {}),
  };
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

export class AuthService {
  private readonly throttle: LoginThrottle;
  /** Tokens seen recently, so a request needs no store read; last use is written back lazily. */
  private readonly tokens = new Map<string, TokenEntry>();
  /** Tokens revoked while the store could not record it, until they would have expired anyway. */
  private readonly revoked = new Map<string, number>();
  private configUsers = new Map<string, LocalUser>();
  /** The config file's users by nameKey: a store user or service account of such a name is shadowed. */
  private configKeys = new Map<string, string>();
  /** Who holds a name (config, store user or service account), read recently: see names.ts. */
  private readonly holders = new Map<string, { holder: NameHolder | undefined; at: number; gen: number }>();
  /** Store users and service accounts read recently, with the access generation they were read in. */
  private readonly storeUsers = new Map<string, { user: LocalUser | undefined; at: number; gen: number }>();
  private readonly accounts = new Map<string, { account: ServiceAccountRecord | undefined; at: number; gen: number }>();
  /** Service account tokens seen, by hash: open streams are checked by hash. */
  private readonly serviceTokens = new Map<string, string>();
  /** Last use of service accounts not yet written to the store. */
  private readonly accountUse = new Map<string, { at: number; persisted: number }>();
  /** Resolved groups by the names asked for, with the generation they were read in. */
  private readonly groupCache = new Map<string, { groups: Group[]; at: number; gen: number }>();
  /** Bumped by every change of users, groups or service accounts: cached identities are read again. */
  private generation = 0;
  private readonly listeners: RevokeListener[] = [];
  private readonly now: () => number;
  private readonly storeTtlMs: number;
  private readonly delay: (ms: number) => Promise<void>;
  private readonly resolveGroups: (names: readonly string[]) => Promise<Group[]>;
  private readonly directory: Directory | undefined;
  private readonly internalTopics: InternalTopics | undefined;

  constructor(
    private readonly db: Db,
    private readonly settings: AuthSettings,
    configUsers: UserConfig[],
    private readonly log: Logger,
    opts: AuthOptions = {},
    deps: IdentityDeps = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.storeTtlMs = opts.storeTtlMs ?? STORE_TTL_MS;
    this.delay = opts.delay ?? ((ms) => Bun.sleep(ms));
    this.resolveGroups = deps.groups ?? (async () => []);
    this.directory = deps.directory;
    this.internalTopics = deps.internalTopics;
    this.throttle = new LoginThrottle({ limit: settings.maxFailedLogins, windowMs: settings.failedLoginWindowMs }, this.now);
    this.indexConfigUsers(configUsers);
  }

  private indexConfigUsers(users: UserConfig[]): void {
    this.configUsers = new Map(
      users.map((u) => [
        u.name,
        { name: u.name, email: u.email ?? null, roles: u.roles, groups: u.groups, disabled: false, passwordHash: u.passwordHash },
      ]),
    );
    this.configKeys = new Map(users.map((u) => [nameKey(u.name), u.name]));
  }

  /**
   * The identity that owns `name` (compared without case) among the config file's users, the
   * store's users and the service accounts, in that order; cached like the store's records.
   */
  private async holderOf(name: string, now: number, fresh = false): Promise<NameHolder | undefined> {
    const key = nameKey(name);
    const config = this.configKeys.get(key);
    if (config !== undefined) return { source: "config", name: config };
    const cached = this.holders.get(key);
    if (!fresh && cached && cached.gen === this.generation && now - cached.at < this.storeTtlMs) return cached.holder;
    const gen = this.generation;
    const holder = await storeHolder(this.db, name);
    if (this.holders.size > 10_000) this.holders.clear();
    this.holders.set(key, { holder, at: now, gen });
    return holder;
  }

  /**
   * Who already holds `name` (compared without case), the directory included, for the API to
   * refuse making a second identity of it. Throws UNAVAILABLE when the directory cannot answer:
   * a name is given out only once it is known to be free.
   */
  async nameTaken(name: string): Promise<NameHolder | undefined> {
    const holder = await this.holderOf(name, this.now(), true);
    if (holder || !this.directory) return holder;
    const found = await this.directory.lookup(name);
    return found ? { source: "ldap", name: found.name } : undefined;
  }

  /** Whether the config file defines this user (read-only through the API). */
  isConfigUser(name: string): boolean {
    return this.configUsers.has(name);
  }

  /** The config file's users, as the users API lists them. */
  configUserList(): { name: string; email: string | null; roles: Role[]; groups: string[] }[] {
    return [...this.configUsers.values()].map(({ name, email, roles, groups }) => ({ name, email, roles, groups }));
  }

  /** Tells `listener` whenever tokens stop working, so what they hold open (streams) can close. */
  onRevoke(listener: RevokeListener): void {
    this.listeners.push(listener);
  }

  private notify(tokenHash: string | null, reason: string): void {
    for (const l of this.listeners) {
      try {
        l(tokenHash, reason);
      } catch (e) {
        this.log.warn("revocation listener failed", {}, e);
      }
    }
  }

  /**
   * Users, groups or service accounts changed (through the API or a reload): every cached
   * identity is read again at its next request, and open streams are checked now.
   */
  accessChanged(reason = "access changed"): void {
    this.generation++;
    this.storeUsers.clear();
    this.accounts.clear();
    this.holders.clear();
    this.groupCache.clear();
    this.notify(null, reason);
  }

  /**
   * Replaces the users of the config file (a reload). Rights are resolved on every request,
   * so a changed role applies at the next one; the tokens of removed users are revoked.
   */
  async setUsers(users: UserConfig[]): Promise<void> {
    const before = new Set(this.configUsers.keys());
    this.indexConfigUsers(users);
    const removed = [...before].filter((n) => !this.configUsers.has(n));
    for (const [hash, t] of this.tokens) if (t.source === "config" && removed.includes(t.userName)) this.tokens.delete(hash);
    if (removed.length) {
      try {
        await this.db
          .updateTable("tokens")
          .set({ revoked_at: this.now() })
          .where("source", "=", "config")
          .where("user_name", "in", removed)
          .where("revoked_at", "is", null)
          .execute();
      } catch (e) {
        // They stay refused anyway: a removed user resolves to no one.
        this.log.warn("could not record the revocation of removed users' tokens", { users: removed.length }, e);
      }
    }
    this.accessChanged("user changed");
  }

  /**
   * Ends every login token of a store user (a reset password, a disabled or deleted account),
   * but `keep`: the session that changed its own password stays.
   */
  async revokeUser(name: string, keep?: string): Promise<void> {
    const ended: string[] = [];
    for (const [hash, t] of this.tokens)
      if (t.source === "store" && t.userName === name && hash !== keep) {
        this.tokens.delete(hash);
        ended.push(hash);
      }
    await this.db
      .updateTable("tokens")
      .set({ revoked_at: this.now() })
      .where("user_name", "=", name)
      .where("source", "=", "store")
      .where("revoked_at", "is", null)
      .$if(keep !== undefined, (q) => q.where("hash", "!=", keep!))
      .execute();
    for (const hash of ended) this.notify(hash, "token revoked");
  }

  /** Forgets cached store users: call after changing the `users` table. */
  invalidateUsers(): void {
    this.accessChanged("user changed");
  }

  /**
   * With no users configured, the store keeps an `admin` user. On first start it is
   * created with the given password, or a random one that is returned to print once.
   */
  async ensureBootstrapAdmin(password?: string): Promise<{ created: boolean; password?: string }> {
    if (this.configUsers.size > 0) return { created: false };
    const existing = await this.db.selectFrom("users").select("name").executeTakeFirst();
    if (existing) return { created: false };
    const generated = password === undefined || password === "";
    const secret = generated ? randomBytes(18).toString("base64url") : password;
    await this.db
      .insertInto("users")
      .values({
        name: "admin",
        password_hash: await hashPassword(secret),
        roles: JSON.stringify(["admin"]),
        email: null,
        created_at: Date.now(),
        updated_at: null,
      })
      .execute();
    this.storeUsers.clear();
    return generated ? { created: true, password: secret } : { created: true };
  }

  private async readStoreUser(name: string): Promise<LocalUser | undefined> {
    // No user's name holds a NUL (the names' rule), and PostgreSQL refuses one even in a lookup:
    // a login with it is an unknown user's, on either store.
    if (name.includes("\0")) return undefined;
    const row = await this.db.selectFrom("users").selectAll().where("name", "=", name).executeTakeFirst();
    return (
      row && {
        name: row.name,
        email: row.email,
        roles: JSON.parse(row.roles) as Role[],
        groups: JSON.parse(row.groups ?? "[]") as string[],
        disabled: row.disabled === 1,
        passwordHash: row.password_hash,
      }
    );
  }

  /**
   * A local user: the config file's, else the store's (the file wins a shared name). Read fresh
   * for a login, which must see the current password; cached briefly for requests.
   */
  private async localUser(name: string, now: number, fresh: boolean): Promise<{ user: LocalUser; source: Source } | undefined> {
    const fromConfig = this.configUsers.get(name);
    if (fromConfig) return { user: fromConfig, source: "config" };
    // A store user whose name is a config user's but for case: the file owns the name.
    if (this.configKeys.has(nameKey(name))) return undefined;
    const cached = this.storeUsers.get(name);
    let user: LocalUser | undefined;
    if (!fresh && cached && cached.gen === this.generation && now - cached.at < this.storeTtlMs) user = cached.user;
    else {
      const gen = this.generation;
      user = await this.readStoreUser(name);
      if (this.storeUsers.size > 10_000) this.storeUsers.clear();
      this.storeUsers.set(name, { user, at: now, gen });
    }
    return user && { user, source: "store" };
  }

  /** The groups of these names, cached briefly (and until the next change through the API). */
  private async groupsOf(names: readonly string[], now: number): Promise<Group[]> {
    if (names.length === 0) return [];
    const key = names.join("\u0000");
    const cached = this.groupCache.get(key);
    if (cached && cached.gen === this.generation && now - cached.at < this.storeTtlMs) return cached.groups;
    const gen = this.generation;
    const groups = await this.resolveGroups(names);
    if (this.groupCache.size > 10_000) this.groupCache.clear();
    this.groupCache.set(key, { groups, at: now, gen });
    return groups;
  }

  /** The session's user and scope: own roles (everywhere) plus the groups'. */
  private async identity(
    base: { name: string; email: string | null; kind: IdentityKind; roles: readonly Role[]; groups: readonly string[] },
    now: number,
  ): Promise<{ user: User; scope: Scope }> {
    const groups = await this.groupsOf(base.groups, now);
    const scope = compileScope(base.roles.length ? [ownRolesGroup(base.roles), ...groups] : groups, this.internalTopics);
    return {
      user: { id: base.name, name: base.name, email: base.email, roles: scope.allRoles, groups: [...base.groups], kind: base.kind },
      scope,
    };
  }

  async login(name: string, password: string, address: string): Promise<{ token: string; session: Session }> {
    // Reserved before the password check: concurrent guesses are counted before any is answered.
    const attempt = await this.throttle.reserve(name, address);
    let local: { user: LocalUser; source: Source } | undefined;
    let fromDirectory: DirectoryUser | null = null;
    let ok = false;
    let unavailable = false;
    /** Who holds the name a directory login resolved to, when it is not the directory user. */
    let taken: NameHolder | undefined;
    try {
      if (attempt.delayMs > 0) await this.delay(attempt.delayMs);
      local = await this.localUser(name, this.now(), true);
      if (local) ok = (await Bun.password.verify(password, local.user.passwordHash).catch(() => false)) && !local.user.disabled;
      else if (this.directory) {
        // The work of a local password check too, so a directory name takes no less time than a local one.
        await Bun.password.verify(password, await getDummyHash());
        try {
          fromDirectory = await this.directory.authenticate(name, password);
        } catch (e) {
          unavailable = true;
          throw e;
        }
        // A name another identity holds (the file's, a store user, a service account, in any case)
        // is theirs: the directory's user of that name is not let in as them.
        if (fromDirectory) taken = await this.holderOf(fromDirectory.name, this.now(), true);
        ok = fromDirectory !== null && taken === undefined;
      } else await Bun.password.verify(password, await getDummyHash());
    } finally {
      // A directory that cannot answer says nothing of the password, and a refused directory user
      // typed theirs right: such attempts count neither way.
      if (ok) attempt.succeeded();
      else if (unavailable || taken) attempt.abandoned();
      else attempt.failed();
    }
    if (taken) {
      this.log.warn(`directory login refused: the name is held by ${describeHolder(taken)}`, {
        user: fromDirectory!.name,
        holder: taken.name,
        holderSource: taken.source,
        address,
      });
      throw new AppError("UNAUTHORIZED", "UNAUTHORIZED");
    }
    if (!ok) {
      // A name that is no user may be a password typed into the wrong field: never log it.
      this.log.warn("login failed", local || fromDirectory ? { user: name, address } : { address });
      throw new AppError("UNAUTHORIZED", "UNAUTHORIZED");
    }
    const now = this.now();
    const source: Source = local ? local.source : "ldap";
    const base = local
      ? { name: local.user.name, email: local.user.email, kind: "local" as const, roles: local.user.roles, groups: local.user.groups }
      : { name: fromDirectory!.name, email: fromDirectory!.email, kind: "ldap" as const, roles: [], groups: fromDirectory!.groups };
    const { user, scope } = await this.identity(base, now);
    const token = randomBytes(32).toString("base64url");
    const session: Session = {
      user,
      scope,
      tokenHash: hashToken(token),
      createdAt: now,
      expiresAt: now + this.settings.tokenLifetimeMs,
      lastUsedAt: now,
    };
    const directoryGroups = source === "ldap" ? base.groups : undefined;
    await this.db
      .insertInto("tokens")
      .values({
        hash: session.tokenHash,
        user_name: user.name,
        // Kept for the column; rights are always read from the current records.
        roles: JSON.stringify(user.roles),
        source,
        created_at: now,
        last_used_at: now,
        expires_at: session.expiresAt,
        revoked_at: null,
        groups: directoryGroups ? JSON.stringify(directoryGroups) : null,
        groups_at: directoryGroups ? now : null,
      })
      .execute();
    this.tokens.set(session.tokenHash, newEntry(user.name, source, now, session.expiresAt, directoryGroups));
    this.log.info("login", { user: user.name, address, kind: base.kind });
    return { token, session };
  }

  /**
   * Checks a password outside a login (a user changing their own), under the login throttle:
   * a wrong one counts against the same account and address as a failed login, and the check
   * is slowed or refused (429) alike, so a stolen token is no way round the throttle.
   */
  async checkPassword(name: string, address: string, check: () => Promise<boolean>): Promise<boolean> {
    const attempt = await this.throttle.reserve(name, address);
    let ok: boolean;
    try {
      if (attempt.delayMs > 0) await this.delay(attempt.delayMs);
      ok = await check();
    } catch (e) {
      attempt.abandoned();
      throw e;
    }
    if (ok) attempt.succeeded();
    else {
      attempt.failed();
      this.log.warn("password check failed", { user: name, address });
    }
    return ok;
  }

  /** The token's entry from the cache or the store; undefined when unknown or revoked. */
  private async entry(hash: string, now: number): Promise<TokenEntry | undefined> {
    const revokedUntil = this.revoked.get(hash);
    if (revokedUntil !== undefined) {
      if (now >= revokedUntil) this.revoked.delete(hash);
      return undefined;
    }
    let t = this.tokens.get(hash);
    if (t && (now - t.checkedAt >= this.storeTtlMs || now < t.checkedAt)) {
      if (!(await this.stillValid(hash, t, now))) {
        this.tokens.delete(hash);
        return undefined;
      }
    }
    if (!t) {
      const row = await this.db
        .selectFrom("tokens")
        .selectAll()
        .where("hash", "=", hash)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
      if (!row) return undefined;
      t = {
        checkedAt: now,
        userName: row.user_name,
        source: row.source === "config" ? "config" : row.source === "ldap" ? "ldap" : "store",
        createdAt: row.created_at,
        expiresAt: row.expires_at,
        lastUsedAt: row.last_used_at,
        persistedLastUse: row.last_used_at,
        ...(row.groups !== null ? { groups: JSON.parse(row.groups) as string[], groupsAt: row.groups_at ?? 0 } : {}),
      };
      if (this.tokens.size > 50_000) this.tokens.clear();
      this.tokens.set(hash, t);
    }
    return t;
  }

  /**
   * Reads a cached token's row again: false when it was revoked or removed meanwhile (a logout or
   * a password reset on another instance sharing the store). Its last use there counts here too.
   * A store that cannot be read keeps the token as it was (logged): an outage does not log
   * everyone out.
   */
  private async stillValid(hash: string, t: TokenEntry, now: number): Promise<boolean> {
    try {
      const row = await this.db.selectFrom("tokens").select(["revoked_at", "last_used_at"]).where("hash", "=", hash).executeTakeFirst();
      if (!row || row.revoked_at !== null) return false;
      t.lastUsedAt = Math.max(t.lastUsedAt, row.last_used_at);
      t.persistedLastUse = Math.max(t.persistedLastUse, row.last_used_at);
      t.checkedAt = now;
      return true;
    } catch (e) {
      this.log.warn("could not read a token again from the store; it is used as last read", {}, e);
      return true;
    }
  }

  /**
   * A directory token's groups, read again from the directory once `refreshMs` has passed. A
   * user gone from the directory ends the token; a directory that cannot answer keeps the groups
   * last read (logins fail closed; live tokens are not all cut off by a directory restart).
   */
  private async refreshDirectoryGroups(hash: string, t: TokenEntry, now: number): Promise<boolean> {
    const directory = this.directory;
    if (!directory) return false;
    if (t.groupsAt !== undefined && now - t.groupsAt < directory.refreshMs) return true;
    t.refreshing ??= (async () => {
      try {
        const found = await directory.lookup(t.userName);
        if (!found) {
          t.groups = undefined;
          await this.db
            .updateTable("tokens")
            .set({ revoked_at: now })
            .where("hash", "=", hash)
            .execute()
            .catch(() => undefined);
          this.tokens.delete(hash);
          this.log.info("directory user gone: token ended", { user: t.userName });
          return;
        }
        t.groups = found.groups;
        t.groupsAt = now;
        await this.db
          .updateTable("tokens")
          .set({ groups: JSON.stringify(found.groups), groups_at: now })
          .where("hash", "=", hash)
          .execute()
          .catch(() => undefined);
      } catch (e) {
        t.groupsAt = now; // tried: the next try waits another interval
        this.log.warn("could not re-read a directory user's groups; the groups last read still apply", { user: t.userName }, e);
      } finally {
        t.refreshing = undefined;
      }
    })();
    await t.refreshing;
    return t.groups !== undefined;
  }

  /** The current user and scope behind a token entry; undefined when removed, disabled, or no longer that source's. */
  private async current(hash: string, t: TokenEntry, now: number): Promise<{ user: User; scope: Scope } | undefined> {
    if (t.source === "ldap") {
      // Another identity now holds the name: the directory's token no longer speaks for it.
      if (!this.directory || (await this.holderOf(t.userName, now))) return undefined;
      if (!(await this.refreshDirectoryGroups(hash, t, now)) || !t.groups) return undefined;
      return this.identity({ name: t.userName, email: null, kind: "ldap", roles: [], groups: t.groups }, now);
    }
    const local = await this.localUser(t.userName, now, false);
    if (!local || local.source !== t.source || local.user.disabled) return undefined;
    const u = local.user;
    return this.identity({ name: u.name, email: u.email, kind: "local", roles: u.roles, groups: u.groups }, now);
  }

  /** The session of a token, or undefined when it is unknown, revoked, expired, idle too long, or its identity is gone. */
  async authenticate(token: string, now = this.now()): Promise<Session | undefined> {
    if (!token || token.length > 512) return undefined;
    const service = SERVICE_TOKEN.exec(token);
    if (service) return this.authenticateService(service[1]!, service[2]!, hashToken(token), now);
    const hash = hashToken(token);
    const t = await this.entry(hash, now);
    if (!t) return undefined;
    if (now >= t.expiresAt || now - t.lastUsedAt >= this.settings.idleTimeoutMs) {
      this.tokens.delete(hash);
      return undefined;
    }
    const who = await this.current(hash, t, now);
    if (!who) return undefined;
    t.lastUsedAt = now;
    // Persist last use now and then, so an idle timeout survives a restart without a write per request.
    if (now - t.persistedLastUse > Math.min(60_000, this.settings.idleTimeoutMs / 4)) {
      t.persistedLastUse = now;
      try {
        await this.db.updateTable("tokens").set({ last_used_at: now }).where("hash", "=", hash).execute();
      } catch (e) {
        // Only a hint for after a restart: a full disk must not refuse a valid token.
        this.log.warn("could not record a token's last use", {}, e);
      }
    }
    return { ...who, tokenHash: hash, createdAt: t.createdAt, expiresAt: t.expiresAt, lastUsedAt: now };
  }

  private async account(name: string, now: number): Promise<ServiceAccountRecord | undefined> {
    const cached = this.accounts.get(name);
    if (cached && cached.gen === this.generation && now - cached.at < this.storeTtlMs) return cached.account;
    const gen = this.generation;
    const row = await this.db.selectFrom("service_accounts").selectAll().where("name", "=", name).executeTakeFirst();
    // A user of the config file or the store whose name is the account's but for case owns the name.
    const holder = row && (await this.holderOf(name, now));
    const account =
      row && (!holder || holder.source === "service")
        ? {
            name: row.name,
            secretHash: row.secret_hash,
            groups: JSON.parse(row.groups) as string[],
            expiresAt: row.expires_at,
            disabled: row.disabled === 1,
            createdAt: row.created_at,
          }
        : undefined;
    if (this.accounts.size > 10_000) this.accounts.clear();
    this.accounts.set(name, { account, at: now, gen });
    return account;
  }

  /** A service account's session for `name:secret`, or undefined (unknown, wrong secret, disabled, expired). */
  private async authenticateService(name: string, secret: string, tokenHash: string, now: number): Promise<Session | undefined> {
    const a = await this.account(name, now);
    // Compared whatever was found, in constant time: no answer tells a name from a secret.
    const given = Buffer.from(sha256(secret), "hex");
    const want = Buffer.from(a?.secretHash ?? "0".repeat(64), "hex");
    const match = want.length === given.length && timingSafeEqual(want, given);
    if (!a || !match || a.disabled || (a.expiresAt !== null && now >= a.expiresAt)) return undefined;
    if (this.serviceTokens.size > 10_000) this.serviceTokens.clear();
    this.serviceTokens.set(tokenHash, name);
    await this.recordAccountUse(name, now);
    const who = await this.identity({ name, email: null, kind: "service", roles: [], groups: a.groups }, now);
    return { ...who, tokenHash, createdAt: a.createdAt, expiresAt: a.expiresAt ?? NEVER, lastUsedAt: now };
  }

  /** Last use, written at most once a minute per account. */
  private async recordAccountUse(name: string, now: number): Promise<void> {
    const use = this.accountUse.get(name) ?? { at: now, persisted: 0 };
    use.at = now;
    this.accountUse.set(name, use);
    if (now - use.persisted < 60_000) return;
    use.persisted = now;
    try {
      await this.db.updateTable("service_accounts").set({ last_used_at: now }).where("name", "=", name).execute();
    } catch (e) {
      this.log.warn("could not record a service account's last use", { account: name }, e);
    }
  }

  /** A service account's last use, including one not yet written to the store. */
  accountLastUse(name: string): number | undefined {
    return this.accountUse.get(name)?.at;
  }

  /**
   * The current scope of an identity by name, resolved as a login resolves it (the config file's
   * user, the store's, a service account, the directory's through a lookup), for what acts in its
   * name while it is away (a processor runs with its owner's rights). `kind` is where it came
   * from when known; null tries each source in the login's order. A string says why it has no
   * rights now ("no longer exists", "is disabled"). Throws when the directory cannot answer.
   */
  async scopeOfIdentity(name: string, kind: string | null): Promise<Scope | string> {
    const now = this.now();
    const ofAccount = async (): Promise<Scope | string | undefined> => {
      const a = await this.account(name, now);
      if (!a) return undefined;
      if (a.disabled) return "is disabled";
      if (a.expiresAt !== null && now >= a.expiresAt) return "has expired";
      return (await this.identity({ name, email: null, kind: "service", roles: [], groups: a.groups }, now)).scope;
    };
    if (kind === "service") return (await ofAccount()) ?? "no longer exists";
    if (kind !== "ldap") {
      const local = await this.localUser(name, now, true);
      if (local) {
        if (local.user.disabled) return "is disabled";
        const u = local.user;
        return (await this.identity({ name: u.name, email: u.email, kind: "local", roles: u.roles, groups: u.groups }, now)).scope;
      }
      if (kind === "local") return "no longer exists";
      const account = await ofAccount();
      if (account !== undefined) return account;
    } else if (await this.holderOf(name, now, true)) {
      // Another identity holds the name now, in any case (the config file's user, a local user, a
      // service account), as a login sees it: the directory's identity no longer speaks for it.
      return "is no longer a directory user";
    }
    if (!this.directory) return "no longer exists";
    const found = await this.directory.lookup(name);
    if (!found) return "no longer exists";
    return (await this.identity({ name: found.name, email: found.email, kind: "ldap", roles: [], groups: found.groups }, now)).scope;
  }

  /**
   * Whether an open stream's token still works: its session, or why not. The open stream is
   * use of the token, so it does not go idle meanwhile.
   */
  async checkToken(tokenHash: string, now = this.now()): Promise<Session | string> {
    const accountName = this.serviceTokens.get(tokenHash);
    if (accountName !== undefined) {
      const a = await this.account(accountName, now);
      if (!a) return "service account removed";
      if (a.disabled) return "service account disabled";
      if (a.expiresAt !== null && now >= a.expiresAt) return "service account expired";
      const who = await this.identity({ name: a.name, email: null, kind: "service", roles: [], groups: a.groups }, now);
      return { ...who, tokenHash, createdAt: a.createdAt, expiresAt: a.expiresAt ?? NEVER, lastUsedAt: now };
    }
    const t = await this.entry(tokenHash, now);
    if (!t) return "token revoked";
    if (now >= t.expiresAt) return "token expired";
    const who = await this.current(tokenHash, t, now);
    if (!who) return "user removed or disabled";
    t.lastUsedAt = Math.max(t.lastUsedAt, now);
    return { ...who, tokenHash, createdAt: t.createdAt, expiresAt: t.expiresAt, lastUsedAt: t.lastUsedAt };
  }

  /**
   * Revokes a token. When the store cannot record it (a full disk), it is revoked in memory
   * until it would have expired, and the logout still succeeds.
   */
  async logout(token: string): Promise<boolean> {
    const hash = hashToken(token);
    const now = this.now();
    const known = this.tokens.get(hash);
    this.tokens.delete(hash);
    let revoked: boolean;
    try {
      const res = await this.db
        .updateTable("tokens")
        .set({ revoked_at: now })
        .where("hash", "=", hash)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
      revoked = Number(res.numUpdatedRows) > 0;
    } catch (e) {
      this.log.error("could not record a logout in the store; the token is revoked in memory until it expires", {}, e);
      let expiresAt = known?.expiresAt;
      if (expiresAt === undefined) {
        const row = await this.db
          .selectFrom("tokens")
          .select("expires_at")
          .where("hash", "=", hash)
          .executeTakeFirst()
          .catch(() => undefined);
        expiresAt = row?.expires_at ?? now + this.settings.tokenLifetimeMs;
      }
      this.revoked.set(hash, expiresAt);
      revoked = true;
    }
    this.notify(hash, "token revoked");
    return revoked;
  }

  /** Drops tokens that can no longer be used; records revocations the store missed. */
  async pruneTokens(now = this.now()): Promise<void> {
    for (const [hash, until] of this.revoked) {
      if (now >= until) {
        this.revoked.delete(hash);
        continue;
      }
      try {
        await this.db.updateTable("tokens").set({ revoked_at: now }).where("hash", "=", hash).execute();
        this.revoked.delete(hash);
      } catch {
        break; // the store still refuses writes: keep them in memory, try next time
      }
    }
    for (const [hash, t] of this.tokens) if (now >= t.expiresAt) this.tokens.delete(hash);
    await this.db
      .deleteFrom("tokens")
      .where((eb) => eb.or([eb("expires_at", "<", now), eb("revoked_at", "is not", null)]))
      .execute();
  }
}
