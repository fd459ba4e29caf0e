import type { AppError, ErrorCode } from "../errors.ts";

/** The COMPAT.md error body every failed request answers. */
export interface ErrorBody {
  error_code: number;
  message: string;
  code: ErrorCode;
  requestId: string;
  details?: unknown;
}

export function errorBody(err: AppError, requestId: string): ErrorBody {
  const body: ErrorBody = { error_code: err.status, message: err.message, code: err.code, requestId };
  if (err.details !== undefined) body.details = err.details;
  return body;
}
