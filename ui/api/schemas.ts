/**
 * The schema registry as the UI sees it: its Confluent API passed through /api/proxy-sr/...
 * (bodies as the registry answers them). Subject names may hold any character: every path
 * segment is encoded.
 */
import type { z } from "zod";
import type { SessionAnswer } from "../../src/domains/auth/schemas.ts";
import {
  type Compatibility,
  type CompatibilityLevel,
  type LevelAnswer,
  type RegisterAnswer,
  SCHEMA_TYPES,
  type SchemaVersion,
  schemaBody,
} from "../../src/domains/schemas/schemas.ts";
import { ApiError, api } from "../session.ts";
import { checked } from "./check.ts";
import { quietly } from "./connect.ts";

/** The levels in the order the page offers them. */
export const LEVELS = [
  "NONE",
  "BACKWARD",
  "BACKWARD_TRANSITIVE",
  "FORWARD",
  "FORWARD_TRANSITIVE",
  "FULL",
  "FULL_TRANSITIVE",
] as const satisfies readonly CompatibilityLevel[];

export type { Compatibility, SchemaVersion };
export { SCHEMA_TYPES };

/** The proxy path of `segments`, each encoded. */
export function srPath(...segments: Array<string | number>): string {
  return `/api/proxy-sr/${segments.map((s) => encodeURIComponent(String(s))).join("/")}`;
}

export const srKeys = {
  subjects: ["sr", "subjects"] as const,
  globalLevel: ["sr", "config"] as const,
  subject: (s: string) => ["sr", "subject", s] as const,
};

export const fetchSubjects = () => api<string[]>(srPath("subjects"));
export const fetchVersions = (subject: string) => api<number[]>(srPath("subjects", subject, "versions"));
export const fetchVersion = (subject: string, version: number | "latest") =>
  api<SchemaVersion>(srPath("subjects", subject, "versions", version));

export async function fetchGlobalLevel(): Promise<string> {
  return (await api<LevelAnswer>(srPath("config"))).compatibilityLevel;
}

/** The subject's own level, or null when it follows the global one (the registry answers 404 then). */
export async function fetchSubjectLevel(subject: string): Promise<string | null> {
  try {
    return (await api<LevelAnswer>(srPath("config", subject))).compatibilityLevel;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

export function setLevel(subject: string | null, level: string): Promise<void> {
  const path = subject === null ? srPath("config") : srPath("config", subject);
  return quietly(path, { method: "PUT", body: JSON.stringify({ compatibility: level }) });
}

/** Checks `schema` against the subject's latest version; null when the subject has none yet (nothing to check against). */
export async function checkCompatibility(subject: string, schema: string, schemaType: string): Promise<Compatibility | null> {
  try {
    return await api<Compatibility>(`${srPath("compatibility", "subjects", subject, "versions", "latest")}?verbose=true`, {
      method: "POST",
      body: JSON.stringify(schemaType === "AVRO" ? { schema } : { schema, schemaType }),
    });
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

/** The type is the form's choice, checked here with the server's schema (AVRO, JSON or PROTOBUF). */
export async function register(subject: string, schema: string, schemaType: string): Promise<RegisterAnswer> {
  const given = (schemaType === "AVRO" ? { schema } : { schema, schemaType }) as z.input<typeof schemaBody>;
  return api<RegisterAnswer>(srPath("subjects", subject, "versions"), { method: "POST", body: JSON.stringify(checked(schemaBody, given)) });
}

export function deleteSubject(subject: string, version?: number): Promise<void> {
  return quietly(version === undefined ? srPath("subjects", subject) : srPath("subjects", subject, "versions", version), {
    method: "DELETE",
  });
}

/** Whether this session may delete subjects and versions (the server's flag and the write role). */
export const fetchCanDelete = async () => (await api<SessionAnswer>("/api/auth")).schemaRegistryDelete === true;

/** A schema as people read it: JSON (Avro and JSON Schema) indented, anything else as written. */
export function pretty(schema: string): string {
  try {
    return JSON.stringify(JSON.parse(schema), null, 2);
  } catch {
    return schema;
  }
}

export const subjectHref = (subject: string, params?: Record<string, string>) =>
  `/schemas/${encodeURIComponent(subject)}${params && Object.keys(params).length > 0 ? `?${new URLSearchParams(params)}` : ""}`;
