/**
 * One error type for the whole service, below HTTP: the Kafka layer, the query language, the
 * services all throw AppError with a closed code. `app.onError` (src/http/errors.ts) turns it into
 * the COMPAT.md body: `error_code` and `message` at the top level (what existing clients read),
 * plus the stable `code`, the `requestId` and `details`.
 */

export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  VALIDATION_FAILED: 400,
  INVALID_JSON: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  /** The request's Host is not a name of this Loupe (DNS rebinding): src/http/host-check.ts. */
  MISDIRECTED_REQUEST: 421,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED: 422,
  TOO_MANY_REQUESTS: 429,
  INTERNAL: 500,
  BAD_GATEWAY: 502,
  UNAVAILABLE: 503,
  GATEWAY_TIMEOUT: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: unknown;
  /** Extra response headers, e.g. Retry-After on 429. */
  readonly headers?: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { details?: unknown; cause?: unknown; headers?: Record<string, string>; status?: number } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "AppError";
    this.code = code;
    this.status = opts.status ?? ERROR_STATUS[code];
    this.details = opts.details;
    this.headers = opts.headers;
  }
}

export const badRequest = (message: string, details?: unknown) => new AppError("BAD_REQUEST", message, { details });
export const notFound = (message: string) => new AppError("NOT_FOUND", message);
export const conflict = (message: string, details?: unknown) => new AppError("CONFLICT", message, { details });
export const forbidden = (message = "Your role does not allow this action") => new AppError("FORBIDDEN", message);
