import { useEffect, useState } from "react";
import { clusterOf, withCluster } from "./cluster.ts";
import { Link } from "./components.tsx";
import { AuditPage } from "./pages/Audit.tsx";
import { ConnectPage } from "./pages/Connect.tsx";
import { ConsumerGroupPage } from "./pages/ConsumerGroup.tsx";
import { ConsumersPage } from "./pages/Consumers.tsx";
import { GroupsPage } from "./pages/Groups.tsx";
import { LogsPage } from "./pages/Logs.tsx";
import { type Health, OverviewPage } from "./pages/Overview.tsx";
import { ProcessorsPage } from "./pages/Processors.tsx";
import { SchemasPage } from "./pages/Schemas.tsx";
import { ServiceAccountsPage } from "./pages/ServiceAccounts.tsx";
import { SqlPage } from "./pages/Sql.tsx";
import { TopicDetailPage } from "./pages/TopicDetail.tsx";
import { TopicsPage } from "./pages/Topics.tsx";
import { OwnPasswordButton, UsersPage } from "./pages/Users.tsx";
import { navigate } from "./router.ts";
import { api, logout, type SessionUser, whoAmI } from "./session.ts";
import { currentTheme, toggleTheme } from "./theme.ts";

const NAV: Array<{ path: string; label: string }> = [
  { path: "/", label: "Overview" },
  { path: "/topics", label: "Topics" },
  { path: "/sql", label: "SQL" },
  { path: "/processors", label: "Stream processors" },
  { path: "/consumers", label: "Consumer groups" },
  { path: "/connect", label: "Connect" },
  { path: "/schemas", label: "Schemas" },
  { path: "/audit", label: "Audit" },
  { path: "/logs", label: "Logs" },
  { path: "/users", label: "Users" },
  { path: "/groups", label: "Groups" },
  { path: "/service-accounts", label: "Service accounts" },
];
const ADMIN_ONLY = ["/audit", "/logs", "/users", "/groups", "/service-accounts"];

function pathOnly(location: string): string {
  const i = location.indexOf("?");
  return i < 0 ? location : location.slice(0, i);
}

/** The signed-in frame: cluster picker, navigation, user and roles, theme, logout; the page in the middle. */
export function Shell({ location }: { location: string }) {
  const [user, setUser] = useState<SessionUser | null>(null);
  const [health, setHealth] = useState<Health | null>(null);
  const [theme, setTheme] = useState(currentTheme());
  const path = pathOnly(location);
  const cluster = clusterOf(location);

  useEffect(() => {
    whoAmI().then(setUser, () => {});
    api<Health>("/api/health").then(setHealth, () => {});
  }, []);

  const clusters = health?.clusters ?? [];
  const active = cluster ?? clusters.find((c) => c.default)?.name ?? null;
  const canWrite = user?.roles.some((r) => r === "admin" || r === "write") ?? false;
  // A nodata user reads no records: no workbench, no group offsets (the API refuses both).
  const canRead = user?.roles.some((r) => r !== "nodata") ?? false;
  const current = NAV.find((n) => (n.path === "/" ? path === "/" : path === n.path || path.startsWith(`${n.path}/`)));

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
          {NAV.filter(
            (n) => (!ADMIN_ONLY.includes(n.path) || user?.administrator) && (canRead || !["/sql", "/consumers"].includes(n.path)),
          ).map((n) => (
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
        {path === "/" ? (
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
      </main>
    </div>
  );
}
