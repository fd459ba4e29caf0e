/** The `metrics` setting: /metrics public (the default), turned off, or behind a token of its own. */
import { describe, expect, test } from "bun:test";
import { testRuntime } from "../helpers/runtime.ts";

const TOKEN = "metrics-scrape-token-0123456789";

describe("metrics access", () => {
  test("turned off: 404, and nothing of the cluster is said", async () => {
    const rt = await testRuntime({ metrics: { enabled: false } });
    try {
      const res = await rt.app.request("/metrics");
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain("svc_");
    } finally {
      await rt.dispose();
    }
  });

  test("behind a token: 401 without it or with a user's token, 200 with it", async () => {
    const rt = await testRuntime({ metrics: { token: TOKEN } });
    try {
      const none = await rt.app.request("/metrics");
      expect(none.status).toBe(401);
      expect(none.headers.get("www-authenticate")).toContain("Bearer");
      const wrong = await rt.app.request("/metrics", { headers: { authorization: `Bearer ${TOKEN}x` } });
      expect(wrong.status).toBe(401);
      const user = await rt.app.request("/metrics", { headers: { authorization: `Bearer ${await rt.token("admin")}` } });
      expect(user.status).toBe(401);
      const ok = await rt.app.request("/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain("# TYPE");
    } finally {
      await rt.dispose();
    }
  });

  test("a short token is a configuration error naming the key", async () => {
    await expect(testRuntime({ metrics: { token: "short" } })).rejects.toThrow(/metrics/);
  });
});
