// @no-services
/**
 * 29: the produce dialog's Protobuf template, made by the server from the message a side is
 * written as: every field with its default, nested messages filled in, a oneof by its first
 * member, well-known types in their canonical JSON; and it is a value the encoder takes.
 */
import { expect, test } from "bun:test";
import { encodeMessage, protoTemplate } from "../../src/engine/protobuf.ts";
import { orderTypes } from "../helpers/protobuf.ts";

test("29: a message's template holds each field with its default, and encodes as it is", () => {
  const { order } = orderTypes();
  const template = protoTemplate(order);
  expect(template).toEqual({
    id: "",
    status: "STATUS_UNKNOWN",
    lines: [],
    counts: {},
    card: "",
    placed_at: "1970-01-01T00:00:00Z",
    total: 0,
    extra: {},
    note: "",
    tags: [],
  });
  expect(encodeMessage(order, template)).toBeInstanceOf(Uint8Array);
});
