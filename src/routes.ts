import { AREAS } from "./areas.ts";
import { type AccessRule, indexRules } from "./http/access.ts";
import type { AnyRoute } from "./http/route.ts";

/**
 * Every route the app serves, area by area (src/areas.ts), in the order of the role table
 * (docs/api.md). Each entry is the route's one declaration (next to its handler); nothing here is
 * written twice. The app fails to start when it serves a route missing here or misses a route
 * listed here.
 */
export const ROUTES: readonly AnyRoute[] = AREAS.flatMap((area) => area.routes);

/**
 * The access table: every route's rule, read from the declarations in the order above. What
 * the role table (docs/api.md) and the role matrix show.
 */
export const ACCESS_RULES: readonly AccessRule[] = ROUTES.map((r) => r.access);
indexRules(ACCESS_RULES);
