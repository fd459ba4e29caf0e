import { groupApi } from "./domains/access/group-routes.ts";
import { alertApi } from "./domains/alerts/routes.ts";
import { auditApi } from "./domains/audit/routes.ts";
import { authApi } from "./domains/auth/routes.ts";
import { clusterApi } from "./domains/cluster/routes.ts";
import { configsApi } from "./domains/configs/routes.ts";
import { connectApi } from "./domains/connect/routes.ts";
import { consumerApi } from "./domains/consumers/routes.ts";
import { healthApi } from "./domains/health/routes.ts";
import { jdbcApi } from "./domains/jdbc/routes.ts";
import { jdbcSelectApi } from "./domains/jdbc/select-routes.ts";
import { liveApi } from "./domains/live/routes.ts";
import { logApi } from "./domains/logs/routes.ts";
import { metadataApi } from "./domains/metadata/routes.ts";
import { metricsApi } from "./domains/metrics/routes.ts";
import { processorApi } from "./domains/processors/routes.ts";
import { profileApi } from "./domains/profile/routes.ts";
import { schemaApi } from "./domains/schemas/routes.ts";
import { serverInfoApi } from "./domains/server-info/routes.ts";
import { serviceAccountApi } from "./domains/service-accounts/routes.ts";
import { sqlApi } from "./domains/sql/routes.ts";
import { sqlLibraryApi } from "./domains/sql-library/routes.ts";
import { topicApi } from "./domains/topics/routes.ts";
import { userApi } from "./domains/users/routes.ts";
import { type AccessRule, indexRules } from "./http/access.ts";
import { openApiRoute } from "./http/openapi.ts";
import type { AnyRoute } from "./http/route.ts";
import { uiApi } from "./ui/routes.ts";

/**
 * Every route the app serves, in the order of the role table (docs/api.md). Each entry is the
 * route's one declaration (next to its handler); nothing here is written twice. The app
 * fails to start when it serves a route missing here or misses a route listed here.
 */
export const ROUTES: readonly AnyRoute[] = [
  ...Object.values(authApi),
  ...Object.values(healthApi),
  openApiRoute,
  uiApi.docs,
  ...Object.values(auditApi),
  ...Object.values(logApi),
  ...Object.values(sqlApi),
  ...Object.values(sqlLibraryApi),
  ...Object.values(liveApi),
  ...Object.values(jdbcSelectApi),
  ...Object.values(processorApi),
  ...Object.values(topicApi),
  ...Object.values(metadataApi),
  ...Object.values(jdbcApi),
  ...Object.values(consumerApi),
  ...Object.values(clusterApi),
  ...Object.values(alertApi),
  ...Object.values(connectApi),
  ...Object.values(metricsApi),
  ...Object.values(schemaApi),
  ...Object.values(serverInfoApi),
  ...Object.values(profileApi),
  ...Object.values(configsApi),
  ...Object.values(groupApi),
  ...Object.values(userApi),
  ...Object.values(serviceAccountApi),
  uiApi.index,
  uiApi.assets,
];

/**
 * The access table: every route's rule, read from the declarations in the order above. What
 * the role table (docs/api.md) and the role matrix show.
 */
export const ACCESS_RULES: readonly AccessRule[] = ROUTES.map((r) => r.access);
indexRules(ACCESS_RULES);
