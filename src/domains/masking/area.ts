import { defineArea } from "../../http/area.ts";
import { maskingApi, maskingRoutes } from "./routes.ts";
import type { MaskingService } from "./service.ts";

export const maskingArea = defineArea({
  name: "masking",
  routes: maskingApi,
  build: (d: { masking: MaskingService }) => maskingRoutes(d.masking),
});
