// @no-services
/**
 * A change of an existing connector by a caller whose topic scope is limited is checked against
 * the connector's config first: what the worker answers to that read decides, and the rule
 * fails closed (a change whose topics cannot be checked is not sent).
 */
import { describe, expect, test } from "bun:test";
import { configToCheck } from "../../src/domains/connect/routes.ts";
import { AppError } from "../../src/errors.ts";
import type { UpstreamAnswer } from "../../src/proxy/upstream.ts";

const answer = (status: number, body: string, contentType: string | null = "application/json"): UpstreamAnswer => ({
  status,
  contentType,
  body: new TextEncoder().encode(body),
  url: "http://worker:8083/connectors/c/config",
});

function refusal(a: UpstreamAnswer): AppError {
  try {
    configToCheck(a, "pause");
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error("the change would have been sent");
}

describe("the scope check of a change of an existing connector", () => {
  test("24: a config read refused by the worker (still rebalancing after the retries) refuses the change with 502 instead of sending it unchecked", () => {
    const e = refusal(answer(500, '{"error_code":500,"message":"Request cannot be completed because a rebalance is expected"}'));
    expect(e.status).toBe(502);
    expect(e.message).toContain("HTTP 500");
    expect(e.message).toContain("does not pause a connector whose topics it cannot check");
    expect(refusal(answer(409, '{"error_code":409,"message":"stalled"}')).status).toBe(502);
    expect(refusal(answer(503, "")).status).toBe(502);
  });

  test("24: an answer that is not a JSON object refuses the change too", () => {
    expect(refusal(answer(200, "<html>", "text/html")).status).toBe(502);
    expect(refusal(answer(200, "[1,2]")).status).toBe(502);
    expect(refusal(answer(200, "null")).status).toBe(502);
  });

  test("a connector Connect does not know answers Connect's 404 (a name it cannot route its 400), and a config is checked", () => {
    expect(configToCheck(answer(404, '{"error_code":404,"message":"Connector c not found"}'), "pause")).toBeNull();
    expect(configToCheck(answer(400, "", null), "pause")).toBeNull();
    expect(configToCheck(answer(200, '{"topics":"t1","connector.class":"X"}'), "pause")).toEqual({ topics: "t1", "connector.class": "X" });
  });
});
