/** A topic's stored key and value types; types from src/domains/metadata/schemas.ts (no Avro library). */
import { DATA_TYPES, type TopicMetadata } from "../../src/domains/metadata/schemas.ts";
import { api } from "../session.ts";

export type { TopicMetadata };
export { DATA_TYPES };

const path = (name: string) => `/api/metadata/topics/${encodeURIComponent(name)}`;

export const fetchMetadata = (name: string) => api<TopicMetadata>(path(name));
/** All in the query string: the route takes no body (SPEC). */
export const saveMetadata = (name: string, params: URLSearchParams) => api<TopicMetadata>(`${path(name)}?${params}`, { method: "POST" });
export const removeMetadata = (name: string) => api<string>(path(name), { method: "DELETE" });
