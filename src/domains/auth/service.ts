import { createHash, randomBytes } from "node:crypto";
import type { Role, UserConfig } from "../../config/schema.ts";
import type { Db } from "../../db/index.ts";
import { AppError } from "../../errors.ts";
import type { Logger } from "../../log/logger.ts";

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

/** A hash to verify against when the user does not exist, so both failures cost the same time. */
let dummyHash: Promise<string> | undefined;
const getDummyHash = () => (dummyHash ??= Bun.password.hash(randomBytes(16).toString("hex"), "argon2id"));

export const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

export async function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, "argon2id");
}

/**
 * Counts failed logins in a sliding window, per key (an account or a client address).
 * Past the limit, further attempts are refused until the oldest failure leaves the window.
 */
export class FailureThrottle {
  private failures = new Map<string, number[]>();
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  private recent(key: string, now: number): number[] {
    const list = (this.failures.get(key) ?? []).filter((t) => now - t < this.windowMs);
    if (list.length) this.failures.set(key, list);
    else this.failures.delete(key);
    return list;
  }

  /** Seconds to wait, or 0 when an attempt is allowed now. */
  retryAfter(key: string, now = Date.now()): number {
    const list = this.recent(key, now);
    if (list.length < this.limit) return 0;
    const oldest = list[list.length - this.limit]!;
    return Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000));
  }

  fail(key: string, now = Date.now()): void {
    const list = this.recent(key, now);
    list.push(now);
    // Keep memory bounded per key; a flood only needs `limit` entries to stay locked.
    if (list.length > this.limit * 2) list.splice(0, list.length - this.limit * 2);
    this.failures.set(key, list);
    if (this.failures.size > 100_000) this.sweep(now);
  }

  reset(key: string): void {
    this.failures.delete(key);
  }

  private sweep(now: number): void {
    for (const key of [...this.failures.keys()]) this.recent(key, now);
  }
}

export class AuthService {
  private readonly byAccount: FailureThrottle;
  private readonly byAddress: FailureThrottle;
  /** Sessions seen recently, so a request needs no store read; last use is written back lazily. */
  private readonly cache = new Map<string, Session & { persistedLastUse: number }>();

  constructor(
    private readonly db: Db,
    private readonly settings: AuthSettings,
    private readonly configUsers: UserConfig[],
    private readonly log: Logger,
  ) {
    this.byAccount = new FailureThrottle(settings.maxFailedLogins, settings.failedLoginWindowMs);
    // An address may try several accounts; allow it a few more failures than one account.
    this.byAddress = new FailureThrottle(settings.maxFailedLogins * 4, settings.failedLoginWindowMs);
  }

  /**
   * With no users configured, the store keeps an `admin` user. On first start it is
   * created with the given password, or a random one that is returned to print once.
   */
  async ensureBootstrapAdmin(password?: string): Promise<{ created: boolean; password?: string }> {
    if (this.configUsers.length > 0) return { created: false };
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
    return generated ? { created: true, password: secret } : { created: true };
  }

  private async findUser(name: string): Promise<(User & { passwordHash: string }) | undefined> {
    if (this.configUsers.length > 0) {
      const u = this.configUsers.find((x) => x.name === name);
      return u && { id: u.name, name: u.name, email: u.email ?? null, roles: u.roles, passwordHash: u.passwordHash };
    }
    const row = await this.db.selectFrom("users").selectAll().where("name", "=", name).executeTakeFirst();
    return (
      row && {
        id: row.name,
        name: row.name,
        email: row.email,
        roles: JSON.parse(row.roles) as Role[],
        passwordHash: row.password_hash,
      }
    );
  }

  /** Checks throttles before any password work, so a locked account costs nothing to refuse. */
  private assertNotThrottled(user: string, address: string): void {
    const wait = Math.max(this.byAccount.retryAfter(`u:${user}`), this.byAddress.retryAfter(`a:${address}`));
    if (wait > 0)
      throw new AppError("TOO_MANY_REQUESTS", "Too many failed logins; try again later", {
        headers: { "Retry-After": String(wait) },
        details: { retryAfterSeconds: wait },
      });
  }

  async login(name: string, password: string, address: string): Promise<{ token: string; session: Session }> {
    this.assertNotThrottled(name, address);
    const user = await this.findUser(name);
    const ok = user
      ? await Bun.password.verify(password, user.passwordHash).catch(() => false)
      : await Bun.password.verify(password, await getDummyHash()).then(() => false);
    if (!user || !ok) {
      this.byAccount.fail(`u:${name}`);
      this.byAddress.fail(`a:${address}`);
      this.log.warn("login failed", { user: name, address });
      throw new AppError("UNAUTHORIZED", "UNAUTHORIZED");
    }
    this.byAccount.reset(`u:${name}`);
    const token = randomBytes(32).toString("base64url");
    const now = Date.now();
    const { passwordHash: _ignored, ...plain } = user;
    const session: Session = {
      user: plain,
      tokenHash: hashToken(token),
      createdAt: now,
      expiresAt: now + this.settings.tokenLifetimeMs,
      lastUsedAt: now,
    };
    await this.db
      .insertInto("tokens")
      .values({
        hash: session.tokenHash,
        user_name: user.name,
        roles: JSON.stringify(user.roles),
        source: this.configUsers.length ? "config" : "store",
        created_at: now,
        last_used_at: now,
        expires_at: session.expiresAt,
        revoked_at: null,
      })
      .execute();
    this.cache.set(session.tokenHash, { ...session, persistedLastUse: now });
    this.log.info("login", { user: user.name, address });
    return { token, session };
  }

  /** The session of a token, or undefined when it is unknown, revoked, expired or idle too long. */
  async authenticate(token: string, now = Date.now()): Promise<Session | undefined> {
    if (!token || token.length > 512) return undefined;
    const hash = hashToken(token);
    let s = this.cache.get(hash);
    if (!s) {
      const row = await this.db
        .selectFrom("tokens")
        .selectAll()
        .where("hash", "=", hash)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
      if (!row) return undefined;
      s = {
        user: { id: row.user_name, name: row.user_name, email: null, roles: JSON.parse(row.roles) as Role[] },
        tokenHash: hash,
        createdAt: row.created_at,
        expiresAt: row.expires_at,
        lastUsedAt: row.last_used_at,
        persistedLastUse: row.last_used_at,
      };
      if (this.cache.size > 50_000) this.cache.clear();
      this.cache.set(hash, s);
    }
    if (now >= s.expiresAt || now - s.lastUsedAt >= this.settings.idleTimeoutMs) {
      this.cache.delete(hash);
      return undefined;
    }
    s.lastUsedAt = now;
    // Persist last use now and then, so an idle timeout survives a restart without a write per request.
    if (now - s.persistedLastUse > Math.min(60_000, this.settings.idleTimeoutMs / 4)) {
      s.persistedLastUse = now;
      await this.db.updateTable("tokens").set({ last_used_at: now }).where("hash", "=", hash).execute();
    }
    const { persistedLastUse: _p, ...session } = s;
    return session;
  }

  async logout(token: string): Promise<boolean> {
    const hash = hashToken(token);
    this.cache.delete(hash);
    const res = await this.db
      .updateTable("tokens")
      .set({ revoked_at: Date.now() })
      .where("hash", "=", hash)
      .where("revoked_at", "is", null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Drops tokens that can no longer be used. */
  async pruneTokens(now = Date.now()): Promise<void> {
    await this.db
      .deleteFrom("tokens")
      .where((eb) => eb.or([eb("expires_at", "<", now), eb("revoked_at", "is not", null)]))
      .execute();
  }
}
