// @no-services
/** 26: each notification links to the pages of Loupe it concerns (ui/pages/AlertParts.tsx's linksOf), on its cluster. */
import { expect, test } from "bun:test";
import type { AlertNotification } from "../../src/domains/alerts/schemas.ts";
import { linksOf } from "../../ui/pages/alert-links.ts";

const notification = (alertId: number, labels: Record<string, string>) =>
  ({ alertId, labels, annotations: {} }) as unknown as AlertNotification;

test.each([
  [1000, { instance: "broker 3" }, [{ label: "Brokers", to: "/brokers" }]],
  [1007, {}, [{ label: "Brokers", to: "/brokers" }]],
  [1014, { instance: "broker 2" }, [{ label: "Brokers", to: "/brokers" }]],
  [3001, { connectCluster: "main", connector: "s3 sink" }, [{ label: "Connector s3 sink", to: "/connect/main/connectors/s3%20sink" }]],
  [3002, { connectCluster: "main", connector: "jdbc", task: "0" }, [{ label: "Connector jdbc", to: "/connect/main/connectors/jdbc" }]],
  [5000, { processor: "p/1" }, [{ label: "Processor p/1", to: "/processors/p%2F1" }]],
  [2000, { group: "g", topic: "t*" }, [{ label: "Consumer group g", to: "/consumers/g" }]],
] as const)("alert %p with labels %p links to %p", (id, labels, want) => {
  expect(linksOf(notification(id, labels))).toEqual([...want]);
});

test("the links keep the notification's cluster", () => {
  expect(linksOf(notification(3002, { cluster: "east", connectCluster: "c", connector: "x" }))).toEqual([
    { label: "Connector x", to: "/connect/c/connectors/x?cluster=east" },
  ]);
});
