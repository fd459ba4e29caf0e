import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { fetchHealth, type Health } from "./api/cluster.ts";
import { clusterOf, withCluster } from "./cluster.ts";
import { Link } from "./components.tsx";
import { AuditPage } from "./pages/Audit.tsx";
import { ConnectPage } from "./pages/Connect.tsx";
import { ConsumerGroupPage } from "./pages/ConsumerGroup.tsx";
import { ConsumersPage } from "./pages/Consumers.tsx";
import { GroupsPage } from "./pages/Groups.tsx";
import { LogsPage } from "./pages/Logs.tsx";
import { OverviewPage } from "./pages/Overview.tsx";
import { ProcessorsPage } from "./pages/Processors.tsx";
import { SchemasPage } from "./pages/Schemas.tsx";
import { ServiceAccountsPage } from "./pages/ServiceAccounts.tsx";
import { SqlPage } from "./pages/Sql.tsx";
import { TopicDetailPage } from "./pages/TopicDetail.tsx";
import { TopicsPage } from "./pages/Topics.tsx";
import { OwnPasswordButton, UsersPage } from "./pages/Users.tsx";
import { navigate } from "./router.ts";
import { can, type Level, logout, type SessionUser, ViewerContext, whoAmI } from "./session.ts";
import "./styles/shell.css";
import { currentTheme, toggleTheme } from "./theme.ts";

/** The pages of the navigation, with the level each needs on the cluster shown (as the API's routes they call). */
const NAV: Array<{ path: string; label: string; level: Level }> = [
  { path: "/", label: "Overview", level: "nodata" },
  { path: "/topics", label: "Topics", level: "nodata" },
  { path: "/sql", label: "SQL", level: "read" },
  { path: "/processors", label: "Stream processors", level: "nodata" },
  { path: "/consumers", label: "Consumer groups", level: "read" },
  { path: "/connect", label: "Connect", level: "nodata" },
  { path: "/schemas", label: "Schemas", level: "nodata" },
  { path: "/audit", label: "Audit", level: "admin" },
  { path: "/logs", label: "Logs", level: "admin" },
  { path: "/users", label: "Users", level: "admin" },
  { path: "/groups", label: "Groups", level: "admin" },
  { path: "/service-accounts", label: "Service accounts", level: "admin" },
];

/**
 * What a page is for and the level it needs, said when the signed-in user lacks it. A page under
 * one of NAV's needs that page's level, unless it changes things (a new processor, a connector's
 * editor), which needs `write`.
 */
function pageNeed(path: string, page: (typeof NAV)[number] | undefined): { level: Level; what: string } | null {
  if (path === "/processors/new") return { level: "write", what: "Creating a stream processor" };
  if (/^\/connect\/[^/]+\/new$/.test(path) || /^\/connect\/[^/]+\/connectors\/[^/]+\/edit$/.test(path))
    return { level: "write", what: "Creating and changing connectors" };
  if (!page) return null;
  const what: Record<string, string> = {
    "/sql": "The SQL workbench shows the records of topics",
    "/consumers": "Consumer groups show the offsets and lag of the groups reading topics",
    "/audit": "The audit log",
    "/logs": "Reading Loupe's logs",
    "/users": "Managing users",
    "/groups": "Managing groups",
    "/service-accounts": "Managing service accounts",
  };
  return { level: page.level, what: what[page.path] ?? page.label };
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
  const current = NAV.find((n) => (n.path === "/" ? path === "/" : path === n.path || path.startsWith(`${n.path}/`)));
  const need = pageNeed(path, current);

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
          {NAV.filter((n) => can(user, n.level)).map((n) => (
            <li key={n.path}>
              <Link to={withCluster(n.path, cluster)} current={n === current}>
                {n.label}
              </Link>
            </li>
          ))}
          <li>
            <a href="/api/docs">API</a>
          </li>
        </ul>
      </nav>
      <main className="content">
        <ViewerContext.Provider value={user}>
          {!user ? (
            <section>
              {session.error ? (
                <p className="error" role="alert">
                  {session.error.message}
                </p>
              ) : (
                <p className="muted">Loading…</p>
              )}
            </section>
          ) : need && !can(user, need.level) ? (
            <NotForYou user={user} cluster={active} title={current?.label ?? "Not allowed"} need={need} />
          ) : path === "/" ? (
            <OverviewPage health={health} />
          ) : path === "/topics" ? (
            <TopicsPage location={location} canWrite={canWrite} />
          ) : path.startsWith("/topics/") && path.length > "/topics/".length ? (
            <TopicDetailPage
              name={decodeURIComponent(path.slice("/topics/".length))}
              location={location}
              canWrite={canWrite}
              canRead={canRead}
            />
          ) : path === "/sql" ? (
            <SqlPage location={location} />
          ) : path === "/audit" ? (
            <AuditPage location={location} />
          ) : path === "/logs" ? (
            <LogsPage location={location} />
          ) : path === "/users" ? (
            <UsersPage location={location} self={user?.name ?? null} />
          ) : path === "/groups" ? (
            <GroupsPage location={location} />
          ) : path === "/service-accounts" ? (
            <ServiceAccountsPage location={location} />
          ) : path === "/connect" || path.startsWith("/connect/") ? (
            <ConnectPage path={path} location={location} canWrite={canWrite} />
          ) : path === "/schemas" || path.startsWith("/schemas/") ? (
            <SchemasPage path={path} location={location} canWrite={canWrite} />
          ) : path === "/processors" || path.startsWith("/processors/") ? (
            <ProcessorsPage
              path={path}
              location={location}
              viewer={{ name: user?.name ?? null, canWrite, canRead, admin: user?.administrator ?? false }}
            />
          ) : path === "/consumers" ? (
            <ConsumersPage location={location} />
          ) : path.startsWith("/consumers/") && path.length > "/consumers/".length ? (
            <ConsumerGroupPage id={decodeURIComponent(path.slice("/consumers/".length))} location={location} canWrite={canWrite} />
          ) : (
            <section>
              <h1>{current?.label ?? "Not found"}</h1>
              <p className="muted">{current ? "This page is coming in a later release of the UI." : `No page at ${path}.`}</p>
            </section>
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
