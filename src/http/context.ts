import type { Session } from "../domains/auth/service.ts";
import type { AccessRule } from "./access.ts";

/** Values middleware puts on the request context. */
export interface AppVariables {
  requestId: string;
  session: Session | undefined;
  rule: AccessRule | undefined;
  /** Extra audit content a handler adds for the automatic audit entry. */
  auditContent: Record<string, unknown> | undefined;
}

export type AppEnv = { Variables: AppVariables; Bindings: { server?: import("bun").Server<unknown> } };
