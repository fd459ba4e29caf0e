/**
 * A JSON value as a collapsible tree of <details>: Tab reaches each branch, Enter or Space opens
 * and closes it, and a screen reader says whether it is expanded. A branch renders its children
 * only while open, at most MAX_CHILDREN of them, so a large value costs what is looked at.
 */
import { useEffect, useRef, useState } from "react";
import { count } from "../format.ts";
import { isContainer } from "./cells.ts";

const MAX_CHILDREN = 500;

export type JsonPath = readonly (string | number)[];

const samePrefix = (path: JsonPath, of: JsonPath) => path.length <= of.length && path.every((p, i) => p === of[i]);

function Leaf({ value }: { value: unknown }) {
  if (value === null) return <span className="json-null">null</span>;
  if (typeof value === "string") return <span className="json-string">{JSON.stringify(value)}</span>;
  if (typeof value === "number") return <span className="json-number">{String(value)}</span>;
  if (typeof value === "boolean") return <span className="json-boolean">{String(value)}</span>;
  return <span>{String(value)}</span>;
}

function Branch({ name, value, path, focus }: { name: string; value: object; path: JsonPath; focus: JsonPath | null }) {
  const onFocusPath = focus !== null && samePrefix(path, focus);
  const [open, setOpen] = useState(path.length === 0 || onFocusPath);
  const summary = useRef<HTMLElement>(null);
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  const isTarget = onFocusPath && focus.length === path.length;
  // Runs when a new path is asked for (a new `focus`), not on every render: a branch the user closed stays closed.
  useEffect(() => {
    if (focus === null) return;
    if (onFocusPath) setOpen(true);
    // The branch a cell's Expand asked for takes the focus: the keyboard goes on from there.
    if (isTarget) summary.current?.focus();
  }, [focus, onFocusPath, isTarget]);
  const size = Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`;
  return (
    <details open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary ref={summary}>
        <span className="json-key">{name}</span> <span className="muted">{size}</span>
      </summary>
      {open && (
        <ul>
          {entries.slice(0, MAX_CHILDREN).map(([k, v]) => (
            <Node key={k} name={String(k)} value={v} path={[...path, k]} focus={focus} />
          ))}
          {entries.length > MAX_CHILDREN && <li className="muted">… {count(entries.length - MAX_CHILDREN)} more</li>}
        </ul>
      )}
    </details>
  );
}

function Node({ name, value, path, focus }: { name: string; value: unknown; path: JsonPath; focus: JsonPath | null }) {
  return (
    <li>
      {isContainer(value) ? (
        <Branch name={name} value={value} path={path} focus={focus} />
      ) : (
        <>
          <span className="json-key">{name}</span>: <Leaf value={value} />
        </>
      )}
    </li>
  );
}

/** `focus`: a path to open and give the focus to (a cell's Expand); null for none. */
export function JsonTree({ name, value, focus, label }: { name: string; value: unknown; focus: JsonPath | null; label: string }) {
  return (
    <ul className="json-tree" aria-label={label}>
      <Node name={name} value={value} path={[]} focus={focus} />
    </ul>
  );
}
