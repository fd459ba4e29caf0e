import type { ReactNode } from "react";
import { navigate } from "./router.ts";

/** A link within the app: a real href (open in a new tab works), navigated in place on a plain click. */
export function Link({ to, children, current }: { to: string; children: ReactNode; current?: boolean }) {
  return (
    <a
      href={to}
      aria-current={current ? "page" : undefined}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

/** A figure with its label, in a row of tiles; `text` for words rather than a number. */
export function Tile({ label, value, text }: { label: string; value: string; text?: boolean }) {
  return (
    <div className={text ? "tile tile-text" : "tile"}>
      <span className="muted">{label}</span>
      <strong>{value}</strong>
    </div>
  );
}

/** The end of a dialog's form: the API's refusal where the user acted, then submit and Cancel. */
export function DialogFooter({
  error,
  label,
  busyLabel,
  busy,
  disabled = false,
  danger = false,
  onCancel,
}: {
  error: Error | null;
  label: string;
  busyLabel: string;
  busy: boolean;
  disabled?: boolean;
  danger?: boolean;
  onCancel: () => void;
}) {
  return (
    <>
      {error && (
        <p className="error" role="alert">
          {error.message}
        </p>
      )}
      <div className="toolbar dialog-buttons">
        <button type="submit" className={danger ? "danger" : undefined} disabled={disabled || busy}>
          {busy ? busyLabel : label}
        </button>
        <button type="button" className="ghost" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </>
  );
}
