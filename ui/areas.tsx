import type { ReactNode } from "react";
import { AclsPage } from "./pages/Acls.tsx";
import { AlertsPage } from "./pages/Alerts.tsx";
import { AuditPage } from "./pages/Audit.tsx";
import { BrokersPage } from "./pages/Brokers.tsx";
import { ConnectPage } from "./pages/Connect.tsx";
import { ConsumerGroupPage } from "./pages/ConsumerGroup.tsx";
import { ConsumersPage } from "./pages/Consumers.tsx";
import { GroupsPage } from "./pages/Groups.tsx";
import { KafkaUsersPage } from "./pages/KafkaUsers.tsx";
import { LogsPage } from "./pages/Logs.tsx";
import { MaskingPage } from "./pages/Masking.tsx";
import { type Health, OverviewPage } from "./pages/Overview.tsx";
import { ProcessorsPage } from "./pages/Processors.tsx";
import { QuotasPage } from "./pages/Quotas.tsx";
import { RedrivesPage } from "./pages/Redrives.tsx";
import { SchemasPage } from "./pages/Schemas.tsx";
import { ServiceAccountsPage } from "./pages/ServiceAccounts.tsx";
import { SqlPage } from "./pages/Sql.tsx";
import { TopicDetailPage } from "./pages/TopicDetail.tsx";
import { TopicsPage } from "./pages/Topics.tsx";
import { UsersPage } from "./pages/Users.tsx";
import type { Level, SessionUser } from "./session.ts";

/** What the frame knows when it shows a page. */
export interface PageContext {
  path: string;
  location: string;
  user: SessionUser;
  health: Health | null;
  canWrite: boolean;
  canRead: boolean;
}

/** An area's page: its navigation entry, the paths it answers, and what it needs. */
export interface AreaPage {
  /** The navigation entry; the level is that of the API routes the page calls on the cluster shown. */
  nav: { path: string; label: string; level: Level };
  /** A link out of the UI (the API reference), not a page shown in the frame. */
  external?: true;
  /** What the page is for, said when the signed-in user lacks its level. */
  what?: string;
  /** A path under the page that needs more than the page's level (a form that changes things). */
  needs?(path: string): { level: Level; what: string } | null;
  /** The page at `path` (the navigation path itself or one under it); null: no page there (yet). */
  render?(page: PageContext): ReactNode | null;
}

/** An area of the API the UI shows no page for, and why. */
export interface NoPage {
  page: false;
  why: string;
}

const none = (why: string): NoPage => ({ page: false, why });

const under = (path: string, prefix: string) => path.startsWith(`${prefix}/`) && path.length > prefix.length + 1;

/** A page at its navigation path only. */
const at = (path: string, page: (p: PageContext) => ReactNode) => (p: PageContext) => (p.path === path ? page(p) : null);

/**
 * One entry per area of the API (src/areas.ts), by its name, in the order of the navigation:
 * its page, or why it has none. test/areas.test.ts fails when an area has no entry here.
 */
export const AREA_PAGES = {
  cluster: {
    nav: { path: "/", label: "Overview", level: "nodata" },
    render: ({ health }) => <OverviewPage health={health} />,
  },
  brokers: {
    nav: { path: "/brokers", label: "Brokers", level: "nodata" },
    render: at("/brokers", ({ user }) => <BrokersPage canChange={user.administrator} />),
  },
  topics: {
    nav: { path: "/topics", label: "Topics", level: "nodata" },
    render: ({ path, location, canWrite, canRead }) =>
      under(path, "/topics") ? (
        <TopicDetailPage
          name={decodeURIComponent(path.slice("/topics/".length))}
          location={location}
          canWrite={canWrite}
          canRead={canRead}
        />
      ) : (
        <TopicsPage location={location} canWrite={canWrite} />
      ),
  },
  sql: {
    nav: { path: "/sql", label: "SQL", level: "read" },
    what: "The SQL workbench shows the records of topics",
    render: at("/sql", ({ location }) => <SqlPage location={location} />),
  },
  processors: {
    nav: { path: "/processors", label: "Stream processors", level: "nodata" },
    needs: (path) => (path === "/processors/new" ? { level: "write", what: "Creating a stream processor" } : null),
    render: ({ path, location, user, canWrite, canRead }) => (
      <ProcessorsPage path={path} location={location} viewer={{ name: user.name, canWrite, canRead, admin: user.administrator }} />
    ),
  },
  redrive: {
    nav: { path: "/redrives", label: "Redrive", level: "nodata" },
    needs: (path) => (path === "/redrives/new" ? { level: "write", what: "Creating a redrive job" } : null),
    render: ({ path, location, user, canWrite }) => (
      <RedrivesPage path={path} location={location} viewer={{ name: user.name, canWrite, admin: user.administrator }} />
    ),
  },
  consumers: {
    nav: { path: "/consumers", label: "Consumer groups", level: "read" },
    what: "Consumer groups show the offsets and lag of the groups reading topics",
    render: ({ path, location, canWrite }) =>
      under(path, "/consumers") ? (
        <ConsumerGroupPage id={decodeURIComponent(path.slice("/consumers/".length))} location={location} canWrite={canWrite} />
      ) : path === "/consumers" ? (
        <ConsumersPage location={location} />
      ) : null,
  },
  connect: {
    nav: { path: "/connect", label: "Connect", level: "nodata" },
    needs: (path) =>
      /^\/connect\/[^/]+\/new$/.test(path) || /^\/connect\/[^/]+\/connectors\/[^/]+\/edit$/.test(path)
        ? { level: "write", what: "Creating and changing connectors" }
        : null,
    render: ({ path, location, canWrite }) => <ConnectPage path={path} location={location} canWrite={canWrite} />,
  },
  schemas: {
    nav: { path: "/schemas", label: "Schemas", level: "nodata" },
    render: ({ path, location, canWrite }) => <SchemasPage path={path} location={location} canWrite={canWrite} />,
  },
  acls: {
    nav: { path: "/acls", label: "ACLs", level: "nodata" },
    render: at("/acls", ({ location, user }) => <AclsPage location={location} canAdmin={user.administrator} />),
  },
  quotas: {
    nav: { path: "/quotas", label: "Quotas", level: "nodata" },
    render: at("/quotas", ({ location, user }) => <QuotasPage location={location} canChange={user.administrator} />),
  },
  alerts: {
    nav: { path: "/alerts", label: "Alerts", level: "nodata" },
    needs: (path) => (path === "/alerts/deliveries" ? { level: "read", what: "The delivery state of alerts" } : null),
    render: ({ path, location, user, canWrite, canRead }) => (
      <AlertsPage path={path} location={location} viewer={{ canWrite, canRead, canAdmin: user.administrator }} />
    ),
  },
  audit: {
    nav: { path: "/audit", label: "Audit", level: "admin" },
    what: "The audit log",
    render: at("/audit", ({ location }) => <AuditPage location={location} />),
  },
  logs: {
    nav: { path: "/logs", label: "Logs", level: "admin" },
    what: "Reading Loupe's logs",
    render: at("/logs", ({ location }) => <LogsPage location={location} />),
  },
  "kafka-users": {
    nav: { path: "/kafka-users", label: "Kafka users", level: "admin" },
    what: "Managing the Kafka cluster's SCRAM users",
    render: at("/kafka-users", ({ location }) => <KafkaUsersPage location={location} />),
  },
  users: {
    nav: { path: "/users", label: "Users", level: "admin" },
    what: "Managing users",
    render: at("/users", ({ location, user }) => <UsersPage location={location} self={user.name} />),
  },
  groups: {
    nav: { path: "/groups", label: "Groups", level: "admin" },
    what: "Managing groups",
    render: at("/groups", ({ location }) => <GroupsPage location={location} />),
  },
  "service-accounts": {
    nav: { path: "/service-accounts", label: "Service accounts", level: "admin" },
    what: "Managing service accounts",
    render: at("/service-accounts", ({ location }) => <ServiceAccountsPage location={location} />),
  },
  masking: {
    nav: { path: "/masking", label: "Masking policies", level: "admin" },
    what: "Managing data masking policies",
    render: at("/masking", ({ location }) => <MaskingPage location={location} />),
  },
  "api-docs": { nav: { path: "/api/docs", label: "API", level: "nodata" }, external: true },
  auth: none("signing in is the login form, the session the frame's header"),
  health: none("the overview shows each cluster's health"),
  "sql-library": none("history and saved queries are the SQL workbench's"),
  live: none("the live websocket serves Kafka clients, not the UI"),
  "jdbc-select": none("the JDBC driver's queries"),
  metadata: none("a topic's stored metadata is shown and changed on the topic's page"),
  jdbc: none("the JDBC driver's metadata and inserts"),
  metrics: none("Prometheus scrapes /metrics"),
  "server-info": none("what clients read of the server (config, licence, favourites)"),
  profile: none("favourites and settings that clients keep"),
  configs: none("the topic forms offer its config names; the Brokers page shows and changes broker configs"),
  ui: none("the UI itself"),
} satisfies Record<string, AreaPage | NoPage>;

/** The entries that are pages, in navigation order. */
export const PAGES: ReadonlyArray<AreaPage> = Object.values(AREA_PAGES as Record<string, AreaPage | NoPage>).filter(
  (a): a is AreaPage => !("page" in a),
);
