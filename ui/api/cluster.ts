/** The cluster overview and the service's health; types from the server's schemas. */
import type { ClusterOverview, QuorumView } from "../../src/domains/cluster/schemas.ts";
import type { HealthAnswer } from "../../src/domains/health/schemas.ts";
import { api } from "../session.ts";

export type { ClusterOverview, QuorumView };
export type Health = HealthAnswer;

export const fetchOverview = () => api<ClusterOverview>("/api/cluster");
export const fetchHealth = () => api<Health>("/api/health");
