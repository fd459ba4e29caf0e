/**
 * Issue 29, Protobuf in the topic page of a real browser, like Avro: the produce dialog writes a
 * value as its message in JSON under the registry subject's schema (a field the message lacks is
 * refused, saying which), and the Messages section shows it decoded and indented, format PROTOBUF.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { registryEnv } from "../cluster/cluster.ts";
import { registerOrderSchema } from "../helpers/protobuf.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { compiledLoupe, createTopic, launchChromium, openAs, withPage } from "./browser.ts";

const TOPIC = `ui${Date.now().toString(36)}-proto`;
let server: ServerProcess;
let browser: Browser;

beforeAll(async () => {
  server = await startServerProcess({ schemaRegistry: registryEnv() }, { executable: await compiledLoupe() });
  await createTopic(server, TOPIC, 1);
  await registerOrderSchema(TOPIC);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await server?.request(`/api/topics/${TOPIC}`, { method: "DELETE", role: "admin" }).catch(() => {});
  await browser?.close();
  await server?.stop();
});

const status = (page: Page) => page.getByTestId("browse-status");

describe("29: Protobuf in the topic page", () => {
  test("29: produced as its message in JSON, refused with the field that does not fit, then read back decoded", async () => {
    await withPage(browser, "produce protobuf", async (page) => {
      await openAs(page, `${server.url}/topics/${TOPIC}`, "write");
      await page.getByRole("button", { name: "Produce records…" }).click();
      const dialog = page.getByRole("dialog", { name: `Produce to ${TOPIC}` });
      await dialog.getByText(`PROTOBUF: from the registry subject ${TOPIC}-value`).waitFor();
      const value = dialog.getByLabel("Value", { exact: true });
      // The message's template, as the server makes it: each field with its default.
      const template = JSON.parse(await value.inputValue());
      expect(template).toMatchObject({
        id: "",
        status: "STATUS_UNKNOWN",
        lines: [],
        card: "",
        placed_at: "1970-01-01T00:00:00Z",
        tags: [],
      });
      expect(template).not.toHaveProperty("voucher");
      const send = dialog.getByRole("button", { name: "Produce", exact: true });
      await value.fill('{"id": "o1", "colour": "red"}');
      await send.click();
      await dialog.getByText("colour").first().waitFor();
      await value.fill('{"id": "o1", "status": "SHIPPED", "lines": [{"sku": "pen", "qty": 2}], "total": "9007199254740993"}');
      await send.click();
      await dialog.getByRole("status").getByText("1 record written as STRING / PROTOBUF.").waitFor();
      await dialog.getByRole("button", { name: "Close" }).click();

      await page.getByRole("button", { name: "Read" }).click();
      await status(page).getByText("1 record, newest first: all there are.").waitFor();
      await page.getByRole("button", { name: "Record 0/0" }).click();
      const shown = page.getByRole("region", { name: "Value of record 0/0" });
      expect(await shown.innerText()).toContain("PROTOBUF");
      const pre = await shown.locator("pre").innerText();
      expect(pre).toContain('"total": "9007199254740993"');
      expect(pre).toContain('  "status": "SHIPPED"');
    });
  }, 90_000);
});
