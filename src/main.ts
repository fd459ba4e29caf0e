#!/usr/bin/env bun
/**
 * The command line of the `loupe` executable: it loads the config, has the composition root
 * (compose.ts) build Loupe, serves it with Bun.serve, and handles the process's signals.
 *
 * Each command loads what it needs when it runs: `--version` and `help` load nothing, `serve`
 * the whole server (compose.ts and everything under it), so a quick command starts as fast as
 * Bun itself. Nothing here imports the server statically.
 */
import { lazyValidators } from "./kafka/lazy-validators.ts";
import { VERSION } from "./version.ts";

const USAGE = `loupe ${VERSION}

Usage:
  loupe [serve]          start the server (default)
  loupe --version        print the version
  loupe hash-password    read a password from stdin, print its argon2id hash
  loupe check-config     validate the configuration and exit
  loupe backup FILE      copy the store to FILE (consistent while Loupe serves)
  loupe restore FILE     replace the store with the backup FILE (Loupe stopped)
  loupe migrate-store --from sqlite:FILE --to postgres://USER@HOST/DB [--password-file FILE]
                         copy a SQLite store into an empty PostgreSQL store, verified
                         (counts and checksums of every table); Loupe stopped
  loupe doctor           check the configuration, the store and every service it names;
                         one line per check, exit status 1 on a failure

Configuration: the TOML file named by --config or LOUPE_CONFIG, then LOUPE_* variables.`;

async function readStdin(): Promise<string> {
  const text = await new Response(Bun.stdin.stream()).text();
  return text.replace(/\r?\n$/, "");
}

function configPath(args: string[]): string | undefined {
  const i = args.indexOf("--config");
  if (i >= 0) return args[i + 1];
  const eq = args.find((a) => a.startsWith("--config="));
  return eq?.slice("--config=".length);
}

/** How long open streams get to pass their final line to their clients when the server stops. */
const STOP_STREAMS_MS = 5_000;
/** Past this, the process exits whatever is still closing. */
const STOP_LIMIT_MS = 15_000;

async function serve(args: string[]): Promise<void> {
  // Before the server's modules load: the Kafka client's option validators compile on first use.
  Bun.plugin(lazyValidators(false));
  const [{ buildRuntime }, { loadConfig }, { AppError }, { websocket }, { listen, readTlsFiles }] = await Promise.all([
    import("./compose.ts"),
    import("./config/load.ts"),
    import("./errors.ts"),
    import("./http/websocket.ts"),
    import("./http/listener.ts"),
  ]);
  const path = configPath(args);
  const config = loadConfig({ path });
  // A certificate that cannot be read stops the start before the store or Kafka are touched.
  if (config.server.tls) readTlsFiles(config.server.tls);
  const rt = await buildRuntime(config, { adminPassword: process.env.LOUPE_ADMIN_PASSWORD });
  const log = rt.logs.logger("main");
  if (rt.generatedAdminPassword) {
    // Printed once, on the console only: the store keeps just the hash.
    process.stderr.write(`\nCreated user 'admin' with password: ${rt.generatedAdminPassword}\nIt is shown only this once.\n\n`);
  }
  const server = listen({
    host: config.server.host,
    port: config.server.port,
    bodyLimit: config.server.bodyLimit,
    tls: config.server.tls,
    fetch: (req, srv) => rt.app.fetch(req, { server: srv }),
    websocket,
  });
  if (server.redirectUrl) log.info("redirecting plain HTTP to HTTPS", { url: server.redirectUrl.toString() });
  log.info("listening", { url: server.url.toString(), version: VERSION });
  // A fault in a client library's callback must not take every user's session down with it.
  process.on("uncaughtException", (err) => log.error("uncaught exception", {}, err));
  process.on("unhandledRejection", (err) => log.error("unhandled rejection", {}, err));
  // SIGHUP re-reads the users and groups of the config file and the TLS certificate files (other
  // settings need a restart). An invalid file keeps the current ones.
  process.on("SIGHUP", () => {
    try {
      server.reloadTls();
      if (config.server.tls) log.info("TLS certificate reloaded", { cert: config.server.tls.cert });
    } catch (e) {
      log.warn("TLS certificate not reloaded: the current one stays", { reason: e instanceof Error ? e.message : String(e) });
    }
    let users: typeof config.users;
    try {
      const reloaded = loadConfig({ path });
      users = reloaded.users;
      rt.groups.reloadConfig(reloaded.groups ?? []);
    } catch (e) {
      log.warn("configuration not reloaded: the current users and groups stay", { reason: e instanceof Error ? e.message : String(e) });
      return;
    }
    rt.auth.setUsers(users).then(
      () => log.info("users reloaded from the configuration", { users: users.length }),
      (e) => log.error("reloading users failed", {}, e),
    );
  });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("stopping", { signal, openStreams: rt.streams.total });
    setTimeout(() => {
      log.warn("stopping took too long; exiting");
      process.exit(0);
    }, STOP_LIMIT_MS).unref();
    // Every open stream ends with its final line before the sockets close.
    await rt.streams.closeAll(new AppError("UNAVAILABLE", "server stopping"), STOP_STREAMS_MS);
    await server.stop(true);
    await rt.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

/** `loupe backup FILE` and `loupe restore FILE`: the SQLite store copied out, or a copy put in its place. */
async function storeCopy(cmd: "backup" | "restore", rest: string[]): Promise<number> {
  const file = rest.find((a, i) => !a.startsWith("--") && rest[i - 1] !== "--config");
  if (!file) {
    console.error(`${cmd}: name the backup file: loupe ${cmd} FILE [--config FILE]`);
    return 2;
  }
  const [{ loadConfig }, { backupStore, restoreStore, refuseOnPostgres }] = await Promise.all([
    import("./config/load.ts"),
    import("./db/backup.ts"),
  ]);
  const { dataDir, store } = loadConfig({ path: configPath(rest) });
  refuseOnPostgres(cmd, store);
  if (cmd === "backup") {
    const r = backupStore(dataDir, file);
    console.log(
      `backed up ${dataDir} to ${file}: schema version ${r.schemaVersion}, ${r.auditEntries} audit entries, ${r.bytes} bytes, integrity ok`,
    );
  } else {
    const r = restoreStore(file, dataDir);
    console.log(
      `restored ${file} into ${dataDir}: schema version ${r.schemaVersion}, ${r.auditEntries} audit entries, integrity ok` +
        (r.previous ? `; the store it replaced is kept as ${r.previous}` : ""),
    );
  }
  return 0;
}

/** The value of `--name VALUE` or `--name=VALUE`. */
function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  if (i >= 0) return args[i + 1];
  return args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

/** `loupe migrate-store`: one line per table copied and verified, then the total. */
async function migrateStoreCommand(rest: string[]): Promise<number> {
  const from = option(rest, "from");
  const to = option(rest, "to");
  if (!from || !to) {
    console.error("migrate-store: loupe migrate-store --from sqlite:FILE --to postgres://USER@HOST:PORT/DATABASE [--password-file FILE]");
    return 2;
  }
  const { migrateStore } = await import("./db/migrate-store.ts");
  const copies = await migrateStore({
    from,
    to,
    passwordFile: option(rest, "password-file"),
    progress: (c) => console.log(`${c.table}: ${c.rows} rows, checksum ${c.checksum}`),
  });
  const rows = copies.reduce((n, c) => n + c.rows, 0);
  console.log(`copied and verified ${copies.length} tables, ${rows} rows: counts and checksums match`);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [cmd = "serve", ...rest] = argv;
  switch (cmd) {
    case "--version":
    case "-v":
    case "version":
      console.log(VERSION);
      return 0;
    case "--help":
    case "-h":
    case "help":
      console.log(USAGE);
      return 0;
    case "hash-password": {
      const pw = await readStdin();
      if (!pw) {
        console.error("hash-password: no password on stdin");
        return 2;
      }
      const { hashPassword } = await import("./domains/auth/service.ts");
      console.log(await hashPassword(pw));
      return 0;
    }
    case "check-config": {
      const { loadConfig } = await import("./config/load.ts");
      const config = loadConfig({ path: configPath(rest) });
      if (config.server.tls) {
        const { readTlsFiles } = await import("./http/listener.ts");
        readTlsFiles(config.server.tls);
      }
      console.log("configuration is valid");
      return 0;
    }
    case "backup":
    case "restore":
      return storeCopy(cmd, rest);
    case "migrate-store":
      return migrateStoreCommand(rest);
    case "doctor": {
      const [{ loadConfig }, { runDoctor, formatCheck }] = await Promise.all([
        import("./config/load.ts"),
        import("./domains/doctor/checks.ts"),
      ]);
      const path = configPath(rest) ?? process.env.LOUPE_CONFIG;
      const checks = await runDoctor(loadConfig({ path }), path);
      for (const c of checks) console.log(formatCheck(c));
      return checks.some((c) => c.status === "fail") ? 1 : 0;
    }
    case "serve":
      await serve(rest);
      return -1;
    default:
      if (cmd.startsWith("--config")) {
        await serve(argv);
        return -1;
      }
      console.error(`unknown command '${cmd}'\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  async (err) => {
    // Loaded already when they are what failed.
    const [{ ConfigError }, { SchemaTooNewError, MigrationFailedError, StoreOpenError }, { StoreCommandError }] = await Promise.all([
      import("./config/load.ts"),
      import("./db/index.ts"),
      import("./db/backup.ts"),
    ]);
    if (
      err instanceof ConfigError ||
      err instanceof SchemaTooNewError ||
      err instanceof MigrationFailedError ||
      err instanceof StoreOpenError ||
      err instanceof StoreCommandError
    ) {
      console.error(err.message);
      process.exit(2);
    }
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  },
);
