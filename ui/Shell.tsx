import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { fetchHealth, type Health } from "./api/cluster.ts";
import { type AreaPage, PAGES } from "./areas.tsx";
import { clusterOf, withCluster } from "./cluster.ts";
import { ErrorAlert, Link } from "./components.tsx";
import { OwnPasswordButton } from "./pages/Users.tsx";
import { navigate } from "./router.ts";
import { can, type Level, logout, type SessionUser, ViewerContext, whoAmI } from "./session.ts";
import "./styles/shell.css";
import { currentTheme, toggleTheme } from "./theme.ts";

/** The page showing `path`: the overview only at `/`, any other page at its path and below. */
function pageAt(path: string): AreaPage | undefined {
  return PAGES.find((p) => !p.external && (p.nav.path === "/" ? path === "/" : path === p.nav.path || path.startsWith(`${p.nav.path}/`)));
}

/**
 * What a page is for and the level it needs, said when the signed-in user lacks it: the page's
 * level, unless the path under it changes things (a new processor, a connector's editor).
 */
function pageNeed(path: string, page: AreaPage | undefined): { level: Level; what: string } | null {
  if (!page) return null;
  return page.needs?.(path) ?? { level: page.nav.level, what: page.what ?? page.nav.label };
}

function pathOnly(location: string): string {
  const i = location.indexOf("?");
  return i < 0 ? location : location.slice(0, i);
}

/** The signed-in frame: cluster picker, navigation, user and roles, theme, logout; the page in the middle. */
export function Shell({ location }: { location: string }) {
  const [health, setHealth] = useState<Health | null>(null);
  const [theme, setTheme] = useState(currentTheme());
  const path = pathOnly(location);
  const cluster = clusterOf(location);

  useEffect(() => {
    fetchHealth().then(setHealth, () => {});
  }, []);
  // Who is looking, on the cluster shown: its roles there decide what each page offers.
  const session = useQuery({ queryKey: ["session", cluster], queryFn: whoAmI, placeholderData: (previous) => previous });
  const user = session.data ?? null;

  const clusters = health?.clusters ?? [];
  const active = cluster ?? clusters.find((c) => c.default)?.name ?? null;
  const canWrite = can(user, "write");
  // A nodata user reads no records: no workbench, no group offsets (the API refuses both).
  const canRead = can(user, "read");
  const current = pageAt(path);
  const need = pageNeed(path, current);
  const page = user ? (current?.render?.({ path, location, user, health, canWrite, canRead }) ?? null) : null;

  return (
    <div className="shell">
      <header className="topbar">
        <span className="brand">Loupe</span>
        <label className="cluster-picker">
          <span>Cluster</span>
          <select value={active ?? ""} onChange={(e) => navigate(withCluster(path, e.target.value))} disabled={clusters.length < 2}>
            {clusters.map((c) => (
              <option key={c.name} value={c.name}>
                {c.name}
                {c.status === "DOWN" ? " (down)" : ""}
              </option>
            ))}
          </select>
        </label>
        <span className="spacer" />
        {user && (
          <span className="who" data-testid="who">
            <strong>{user.name}</strong> <span className="muted">{user.roles.join(", ")}</span>
            {user.groups.length > 0 && <span className="muted" data-testid="who-groups">{` · groups: ${user.groups.join(", ")}`}</span>}
          </span>
        )}
        {user?.kind === "local" && <OwnPasswordButton />}
        <button
          type="button"
          className="ghost"
          onClick={() => setTheme(toggleTheme())}
          aria-label={`Switch to ${theme === "dark" ? "light" : "dark"} theme`}
        >
          {theme === "dark" ? "Light" : "Dark"}
        </button>
        <button
          type="button"
          className="ghost"
          onClick={async () => {
            await logout();
            navigate("/login", { replace: true });
          }}
        >
          Log out
        </button>
      </header>
      <nav className="sidebar" aria-label="Main">
        <ul>
          {PAGES.filter((p) => p.external || can(user, p.nav.level)).map((p) => (
            <li key={p.nav.path}>
              {p.external ? (
                <a href={p.nav.path}>{p.nav.label}</a>
              ) : (
                <Link to={withCluster(p.nav.path, cluster)} current={p === current}>
                  {p.nav.label}
                </Link>
              )}
            </li>
          ))}
        </ul>
      </nav>
      <main className="content">
        <ViewerContext.Provider value={user}>
          {!user ? (
            <section>{session.error ? <ErrorAlert error={session.error} /> : <p className="muted">Loading…</p>}</section>
          ) : need && !can(user, need.level) ? (
            <NotForYou user={user} cluster={active} title={current?.nav.label ?? "Not allowed"} need={need} />
          ) : (
            (page ?? (
              <section>
                <h1>{current?.nav.label ?? "Not found"}</h1>
                <p className="muted">{current ? "This page is coming in a later release of the UI." : `No page at ${path}.`}</p>
              </section>
            ))
          )}
        </ViewerContext.Provider>
      </main>
    </div>
  );
}

/** Roles in words: "the role read on cluster local", "no role on cluster local". */
function holds(user: SessionUser, cluster: string | null): string {
  const on = cluster ? ` on cluster ${cluster}` : "";
  if (user.clusterRoles.length === 0) return `no role${on}`;
  const roles = user.clusterRoles.join(", ");
  const limited = user.everyTopic ? "" : ", on some of its topics only";
  return `${user.clusterRoles.length === 1 ? "the role" : "the roles"} ${roles}${on}${limited}`;
}

/**
 * A page the signed-in user may not use, opened by a link: what it is for, what it needs, what
 * they hold, said in words rather than the API's refusal, and nothing offered that would fail.
 */
function NotForYou({
  user,
  cluster,
  title,
  need,
}: {
  user: SessionUser;
  cluster: string | null;
  title: string;
  need: { level: Level; what: string };
}) {
  const who = `You are signed in as ${user.name}, with ${holds(user, cluster)}.`;
  const needs =
    user.clusterRoles.length === 0 && need.level !== "admin"
      ? `Your groups give you no role on cluster ${cluster ?? "this cluster"}: Loupe shows nothing of it to you. Choose another cluster above, or ask an administrator to add you to a group on this one.`
      : need.level === "admin"
        ? `${need.what} is for Loupe's administrators: it needs the admin role on every cluster and every topic${
            user.clusterRoles.includes("admin") ? " (yours is limited to some clusters or topics)" : ""
          }.`
        : need.level === "read"
          ? `${need.what}: it needs the read role. The nodata role shows the cluster, its topics, partitions, offsets and configs, but no record.`
          : `${need.what} needs the write role.`;
  return (
    <section className="card not-for-you" aria-labelledby="not-for-you-title">
      <h1 id="not-for-you-title">{title}</h1>
      <p data-testid="not-for-you">{needs}</p>
      <p className="muted">
        {who} Ask an administrator if you need more. <Link to={withCluster("/", cluster)}>Back to the overview</Link>
      </p>
    </section>
  );
}
