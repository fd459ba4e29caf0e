import { createHash, randomBytes } from "node:crypto";
import type { Role, UserConfig } from "../../config/schema.ts";
import type { Db } from "../../db/index.ts";
import { AppError } from "../../errors.ts";
import type { Logger } from "../../log/logger.ts";
import { LoginThrottle } from "./throttle.ts";

export interface User {
  id: string;
  name: string;
  email: string | null;
  roles: Role[];
}

export interface Session {
  user: User;
  tokenHash: string;
  createdAt: number;
  expiresAt: number;
  lastUsedAt: number;
}

export interface AuthSettings {
  tokenLifetimeMs: number;
  idleTimeoutMs: number;
  maxFailedLogins: number;
  failedLoginWindowMs: number;
}

/** Time and waiting, injectable so tests advance a clock instead of sleeping. */
export interface AuthOptions {
  now?: () => number;
  delay?: (ms: number) => Promise<void>;
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

type Source = "config" | "store";

/** What a token says: whose it is and when it ends. Roles are never taken from it. */
interface TokenEntry {
  userName: string;
  source: Source;
  createdAt: number;
  expiresAt: number;
  lastUsedAt: number;
  persistedLastUse: number;
}

/**
 * Store users are re-read after this long, so a change written to the `users` table by other
 * means than this service applies within it; changes made through the service apply at once.
 */
const STORE_USER_TTL_MS = 1_000;

const toUser = (name: string, email: string | null | undefined, roles: Role[]): User => ({ id: name, name, email: email ?? null, roles });

export class AuthService {
  private readonly throttle: LoginThrottle;
  /** Tokens seen recently, so a request needs no store read; last use is written back lazily. */
  private readonly tokens = new Map<string, TokenEntry>();
  /** Tokens revoked while the store could not record it, until they would have expired anyway. */
  private readonly revoked = new Map<string, number>();
  private configUsers = new Map<string, { user: User; passwordHash: string }>();
  private readonly storeUsers = new Map<string, { user: User | undefined; at: number }>();
  private readonly listeners: RevokeListener[] = [];
  private readonly now: () => number;
  private readonly delay: (ms: number) => Promise<void>;

  constructor(
    private readonly db: Db,
    private readonly settings: AuthSettings,
    configUsers: UserConfig[],
    private readonly log: Logger,
    opts: AuthOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.delay = opts.delay ?? ((ms) => Bun.sleep(ms));
    this.throttle = new LoginThrottle({ limit: settings.maxFailedLogins, windowMs: settings.failedLoginWindowMs }, this.now);
    this.indexConfigUsers(configUsers);
  }

  private indexConfigUsers(users: UserConfig[]): void {
    this.configUsers = new Map(users.map((u) => [u.name, { user: toUser(u.name, u.email, u.roles), passwordHash: u.passwordHash }]));
  }

  /** Where users come from: the config file when it lists any, else the store. */
  private get source(): Source {
    return this.configUsers.size > 0 ? "config" : "store";
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
   * Replaces the users of the config file (a reload). Roles are resolved on every request,
   * so a changed role applies at the next one; the tokens of removed users are revoked.
   */
  async setUsers(users: UserConfig[]): Promise<void> {
    const before = new Set(this.configUsers.keys());
    if (before.size > 0 && users.length === 0)
      this.log.warn("the configuration lists no users any more: users now come from the store, config users' tokens stop working");
    this.indexConfigUsers(users);
    this.storeUsers.clear();
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
    this.notify(null, "user changed");
  }

  /** Forgets cached store users: call after changing the `users` table. */
  invalidateUsers(): void {
    this.storeUsers.clear();
    this.notify(null, "user changed");
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
      })
      .execute();
    this.storeUsers.clear();
    return generated ? { created: true, password: secret } : { created: true };
  }

  /** The user with the password hash, read fresh: a login must see the current password. */
  private async findUser(name: string): Promise<{ user: User; passwordHash: string } | undefined> {
    if (this.source === "config") return this.configUsers.get(name);
    const row = await this.db.selectFrom("users").selectAll().where("name", "=", name).executeTakeFirst();
    return row && { user: toUser(row.name, row.email, JSON.parse(row.roles) as Role[]), passwordHash: row.password_hash };
  }

  /** The current record of a token's user; undefined when removed, disabled (no roles) or from another source. */
  private async currentUser(name: string, source: Source, now: number): Promise<User | undefined> {
    if (source !== this.source) return undefined;
    let user: User | undefined;
    if (source === "config") user = this.configUsers.get(name)?.user;
    else {
      const cached = this.storeUsers.get(name);
      if (cached && now - cached.at < STORE_USER_TTL_MS) user = cached.user;
      else {
        const row = await this.db.selectFrom("users").select(["name", "email", "roles"]).where("name", "=", name).executeTakeFirst();
        user = row && toUser(row.name, row.email, JSON.parse(row.roles) as Role[]);
        if (this.storeUsers.size > 10_000) this.storeUsers.clear();
        this.storeUsers.set(name, { user, at: now });
      }
    }
    return user && user.roles.length > 0 ? user : undefined;
  }

  async login(name: string, password: string, address: string): Promise<{ token: string; session: Session }> {
    // Reserved before the password check: concurrent guesses are counted before any is answered.
    const attempt = await this.throttle.reserve(name, address);
    let found: { user: User; passwordHash: string } | undefined;
    let ok = false;
    try {
      if (attempt.delayMs > 0) await this.delay(attempt.delayMs);
      found = await this.findUser(name);
      ok = found
        ? await Bun.password.verify(password, found.passwordHash).catch(() => false)
        : await Bun.password.verify(password, await getDummyHash()).then(() => false);
    } finally {
      if (ok) attempt.succeeded();
      else attempt.failed();
    }
    if (!found || !ok) {
      // A name that is no user may be a password typed into the wrong field: never log it.
      this.log.warn("login failed", found ? { user: name, address } : { address });
      throw new AppError("UNAUTHORIZED", "UNAUTHORIZED");
    }
    const token = randomBytes(32).toString("base64url");
    const now = this.now();
    const session: Session = {
      user: found.user,
      tokenHash: hashToken(token),
      createdAt: now,
      expiresAt: now + this.settings.tokenLifetimeMs,
      lastUsedAt: now,
    };
    const source = this.source;
    await this.db
      .insertInto("tokens")
      .values({
        hash: session.tokenHash,
        user_name: found.user.name,
        // Kept for the column; roles are always read from the user record.
        roles: JSON.stringify(found.user.roles),
        source,
        created_at: now,
        last_used_at: now,
        expires_at: session.expiresAt,
        revoked_at: null,
      })
      .execute();
    this.tokens.set(session.tokenHash, {
      userName: found.user.name,
      source,
      createdAt: now,
      expiresAt: session.expiresAt,
      lastUsedAt: now,
      persistedLastUse: now,
    });
    this.log.info("login", { user: found.user.name, address });
    return { token, session };
  }

  /** The token's entry from the cache or the store; undefined when unknown or revoked. */
  private async entry(hash: string, now: number): Promise<TokenEntry | undefined> {
    const revokedUntil = this.revoked.get(hash);
    if (revokedUntil !== undefined) {
      if (now >= revokedUntil) this.revoked.delete(hash);
      return undefined;
    }
    let t = this.tokens.get(hash);
    if (!t) {
      const row = await this.db
        .selectFrom("tokens")
        .selectAll()
        .where("hash", "=", hash)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
      if (!row) return undefined;
      t = {
        userName: row.user_name,
        source: row.source === "config" ? "config" : "store",
        createdAt: row.created_at,
        expiresAt: row.expires_at,
        lastUsedAt: row.last_used_at,
        persistedLastUse: row.last_used_at,
      };
      if (this.tokens.size > 50_000) this.tokens.clear();
      this.tokens.set(hash, t);
    }
    return t;
  }

  /** The session of a token, or undefined when it is unknown, revoked, expired, idle too long, or its user is gone. */
  async authenticate(token: string, now = this.now()): Promise<Session | undefined> {
    if (!token || token.length > 512) return undefined;
    const hash = hashToken(token);
    const t = await this.entry(hash, now);
    if (!t) return undefined;
    if (now >= t.expiresAt || now - t.lastUsedAt >= this.settings.idleTimeoutMs) {
      this.tokens.delete(hash);
      return undefined;
    }
    const user = await this.currentUser(t.userName, t.source, now);
    if (!user) return undefined;
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
    return { user, tokenHash: hash, createdAt: t.createdAt, expiresAt: t.expiresAt, lastUsedAt: now };
  }

  /**
   * Whether an open stream's token still works: its session, or why not. The open stream is
   * use of the token, so it does not go idle meanwhile.
   */
  async checkToken(tokenHash: string, now = this.now()): Promise<Session | string> {
    const t = await this.entry(tokenHash, now);
    if (!t) return "token revoked";
    if (now >= t.expiresAt) return "token expired";
    const user = await this.currentUser(t.userName, t.source, now);
    if (!user) return "user removed or disabled";
    t.lastUsedAt = Math.max(t.lastUsedAt, now);
    return { user, tokenHash, createdAt: t.createdAt, expiresAt: t.expiresAt, lastUsedAt: t.lastUsedAt };
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
