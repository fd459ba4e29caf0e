import type { AnyRoute, RouteGroup } from "./route.ts";

/**
 * One feature of the API, registered once in `src/areas.ts`: its routes (their declarations,
 * in the order of the access table) and how its route group is built from the running app's
 * parts. `D` is what the builder needs of them; the app checks at compile time that it has it.
 * The role matrix keeps one fixture per route under the area's name, and the UI one page entry
 * (or a declared "no page") under the same name (`ui/areas.tsx`); test/areas.test.ts fails when
 * one is missing.
 */
export interface Area<D = never> {
  /** Kebab-case, unique: the key of the area's role-matrix fixtures and of its UI page entry. */
  readonly name: string;
  /** The routes' declarations, as the access table lists them. */
  readonly routes: readonly AnyRoute[];
  /** The area's route group over the running app's parts (services are built here or taken from them). */
  readonly build: (deps: D) => RouteGroup;
}

/** An area from its routes object (`topicApi`): its values, in declaration order, are its routes. */
export function defineArea<const N extends string, D>(area: {
  name: N;
  routes: Record<string, AnyRoute> | readonly AnyRoute[];
  build: (deps: D) => RouteGroup;
}): Area<D> & { readonly name: N } {
  const routes = Array.isArray(area.routes) ? area.routes : Object.values(area.routes);
  return { name: area.name, routes, build: area.build };
}
