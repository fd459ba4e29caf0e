/** Answer schemas that more than one domain returns: defined once, so their shapes cannot drift apart. */
import { z } from "zod";

/** A group's position on one partition: what a topic's consumers and a group's detail share. */
export const partitionLag = z.object({
  topic: z.string(),
  partition: z.number(),
  currentOffset: z.number(),
  logEndOffset: z.number(),
  lag: z.number(),
});
