import { z } from "zod";
import { clusterOf } from "../../http/context.ts";
import { type AnyRoute, defineRoute, json, RouteGroup } from "../../http/route.ts";
import { createKafkaUserBody, kafkaUserName, kafkaUserView, rotateKafkaUserBody } from "./schemas.ts";
import type { KafkaUserService } from "./service.ts";

const tags = ["kafka users"];
const params = z.object({ name: kafkaUserName.describe("the Kafka user's name") });
/** The audit intent keeps the request without its password (the audit masks it anyway). */
const withoutPassword = ({ password: _, ...rest }: Record<string, unknown>) => rest;

export const kafkaUserApi = {
  list: defineRoute({
    method: "GET",
    path: "/api/kafka-users",
    level: "admin",
    summary: "The cluster's SCRAM users and their mechanisms (never a password or hash)",
    tags,
    responses: { 200: json(z.array(kafkaUserView)) },
  }),
  create: defineRoute({
    method: "POST",
    path: "/api/kafka-users",
    level: "admin",
    summary: "Create a SCRAM user (mechanism SCRAM-SHA-512 unless given); 409 when it has a credential of that mechanism",
    audit: { type: "KAFKA_USER", change: "ADD", request: withoutPassword },
    tags,
    request: { body: createKafkaUserBody },
    responses: { 200: json(kafkaUserView, "The user, as the brokers describe it") },
  }),
  rotate: defineRoute({
    method: "PUT",
    path: "/api/kafka-users/{name}",
    level: "admin",
    summary: "Give a SCRAM user a new password; 404 when it has no credential of that mechanism",
    audit: { type: "KAFKA_USER", change: "UPDATE", request: withoutPassword },
    tags,
    request: { params, body: rotateKafkaUserBody },
    responses: { 200: json(kafkaUserView, "The user, as the brokers describe it") },
  }),
  remove: defineRoute({
    method: "DELETE",
    path: "/api/kafka-users/{name}",
    level: "admin",
    summary: "Delete every SCRAM credential of a user; 404 when it has none",
    audit: { type: "KAFKA_USER", change: "REMOVE" },
    tags,
    request: { params },
    responses: { 200: json(kafkaUserView, "The credentials deleted") },
  }),
} satisfies Record<string, AnyRoute>;

export function kafkaUserRoutes(service: KafkaUserService) {
  const app = new RouteGroup();
  app.handle(kafkaUserApi.list, async (c) => c.json(await service.list(clusterOf(c)), 200));
  app.handle(kafkaUserApi.create, async (c) => {
    const body = c.req.valid("json");
    c.set("auditContent", { name: body.name, mechanism: body.mechanism, iterations: body.iterations });
    return c.json(await service.create(clusterOf(c), body), 200);
  });
  app.handle(kafkaUserApi.rotate, async (c) => {
    const { name } = c.req.valid("param");
    const body = c.req.valid("json");
    c.set("auditContent", { name, mechanism: body.mechanism, iterations: body.iterations, changed: "password" });
    return c.json(await service.rotate(clusterOf(c), name, body), 200);
  });
  app.handle(kafkaUserApi.remove, async (c) => {
    const { name } = c.req.valid("param");
    c.set("auditContent", { name });
    const removed = await service.remove(clusterOf(c), name);
    c.set("auditContent", { name, mechanisms: removed.credentials.map((m) => m.mechanism).join(",") });
    return c.json(removed, 200);
  });
  return app;
}
