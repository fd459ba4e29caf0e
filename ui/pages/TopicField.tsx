import { type ReactNode, useId } from "react";

/** What a field's control takes to be labelled and described. */
export interface FieldProps {
  id: string;
  "aria-describedby"?: string;
  "aria-invalid"?: boolean;
}

/**
 * A labelled control with a line under it: its problem (as the user types) or a hint. The line
 * is outside the label, so the control's name is the label alone and the line its description.
 */
export function Field({
  label,
  hint,
  problem,
  live,
  control,
}: {
  label: string;
  hint?: ReactNode;
  problem?: string | null;
  /** Say changes of the line to assistive technology as they happen. */
  live?: boolean;
  control: (props: FieldProps) => ReactNode;
}) {
  const id = useId();
  const line = problem ?? hint;
  const lineId = `${id}-line`;
  return (
    <div className="stacked">
      <label htmlFor={id}>{label}</label>
      {control({ id, ...(line ? { "aria-describedby": lineId } : {}), ...(problem ? { "aria-invalid": true } : {}) })}
      {line ? (
        <span id={lineId} className={problem ? "error field-problem" : "muted field-problem"} aria-live={live ? "polite" : undefined}>
          {line}
        </span>
      ) : null}
    </div>
  );
}
