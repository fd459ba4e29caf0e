import { groupsArea } from "./domains/access/area.ts";
import { aclsArea } from "./domains/acls/area.ts";
import { alertsArea } from "./domains/alerts/area.ts";
import { auditArea } from "./domains/audit/area.ts";
import { authArea } from "./domains/auth/area.ts";
import { brokersArea } from "./domains/brokers/area.ts";
import { clusterArea } from "./domains/cluster/area.ts";
import { configsArea } from "./domains/configs/area.ts";
import { connectArea } from "./domains/connect/area.ts";
import { consumersArea } from "./domains/consumers/area.ts";
import { healthArea } from "./domains/health/area.ts";
import { jdbcArea, jdbcSelectArea } from "./domains/jdbc/area.ts";
import { kafkaUsersArea } from "./domains/kafka-users/area.ts";
import { liveArea } from "./domains/live/area.ts";
import { logsArea } from "./domains/logs/area.ts";
import { maskingArea } from "./domains/masking/area.ts";
import { metadataArea } from "./domains/metadata/area.ts";
import { metricsArea } from "./domains/metrics/area.ts";
import { processorsArea } from "./domains/processors/area.ts";
import { profileArea } from "./domains/profile/area.ts";
import { quotasArea } from "./domains/quotas/area.ts";
import { schemasArea } from "./domains/schemas/area.ts";
import { serverInfoArea } from "./domains/server-info/area.ts";
import { serviceAccountsArea } from "./domains/service-accounts/area.ts";
import { sqlArea } from "./domains/sql/area.ts";
import { sqlLibraryArea } from "./domains/sql-library/area.ts";
import { topicsArea } from "./domains/topics/area.ts";
import { usersArea } from "./domains/users/area.ts";
import { apiDocsArea, uiArea } from "./ui/area.ts";

/**
 * Every area of the API, in the order of the access table (the role table in docs/api.md) and of
 * mounting; the UI's catch-all comes last. Adding an area is one line here, one page entry in
 * ui/areas.tsx and one fixture per route in the role matrix; test/areas.test.ts says which is
 * missing.
 */
export const AREAS = [
  authArea,
  healthArea,
  apiDocsArea,
  auditArea,
  logsArea,
  sqlArea,
  sqlLibraryArea,
  liveArea,
  jdbcSelectArea,
  processorsArea,
  topicsArea,
  metadataArea,
  jdbcArea,
  consumersArea,
  clusterArea,
  brokersArea,
  alertsArea,
  connectArea,
  metricsArea,
  schemasArea,
  serverInfoArea,
  profileArea,
  configsArea,
  aclsArea,
  quotasArea,
  kafkaUsersArea,
  groupsArea,
  maskingArea,
  usersArea,
  serviceAccountsArea,
  uiArea,
] as const;

export type AreaName = (typeof AREAS)[number]["name"];
