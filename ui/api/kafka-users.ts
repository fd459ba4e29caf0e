/** The cluster's SCRAM users (`/api/kafka-users`); types and request schemas from the server's (src/domains/kafka-users/schemas.ts). */
import { useQuery } from "@tanstack/react-query";
import type { z } from "zod";
import { createKafkaUserBody, type KafkaUserView, rotateKafkaUserBody } from "../../src/domains/kafka-users/schemas.ts";
import { api } from "../session.ts";
import { checked } from "./check.ts";

export type { KafkaUserView };

export const KAFKA_USERS_KEY = ["kafka-users"] as const;
const one = (name: string) => `/api/kafka-users/${encodeURIComponent(name)}`;

export const fetchKafkaUsers = () => api<KafkaUserView[]>("/api/kafka-users");
export const createKafkaUser = (body: z.input<typeof createKafkaUserBody>) =>
  api<KafkaUserView>("/api/kafka-users", { method: "POST", body: JSON.stringify(checked(createKafkaUserBody, body)) });
export const rotateKafkaUser = (name: string, body: z.input<typeof rotateKafkaUserBody>) =>
  api<KafkaUserView>(one(name), { method: "PUT", body: JSON.stringify(checked(rotateKafkaUserBody, body)) });
export const deleteKafkaUser = (name: string) => api<KafkaUserView>(one(name), { method: "DELETE" });

export const useKafkaUsers = (cluster: string | null) =>
  useQuery({ queryKey: [...KAFKA_USERS_KEY, cluster], queryFn: fetchKafkaUsers, retry: false });
