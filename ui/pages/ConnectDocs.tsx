import { Fragment, type ReactNode } from "react";

/**
 * The documentation Kafka Connect gives for a plugin or a setting, rendered as the markup it is
 * written in (`<code>`, `<a href>`, `<p>`, `<ul><li>`...), without trusting it: it comes from
 * whatever plugins the workers load. Only the tags below become elements, built one by one (no
 * innerHTML); a link keeps an http(s) address only; anything else, such as the `<String,
 * Object>` of a Java signature that Connect's own texts carry unescaped, stays text.
 */

type DocNode = string | { tag: string; href?: string; children: DocNode[] };

const TAGS = "code|tt|a|p|br|ul|ol|li|b|strong|i|em|pre|sup|sub|span|div";
const TAG = new RegExp(`<(/?)(${TAGS})(\\s[^<>]*)?\\s*/?>`, "gi");
const VOID = new Set(["br"]);

const ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'", nbsp: "\u00a0" };

function decode(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (all, name: string) => {
    if (name[0] === "#") {
      const code = name[1] === "x" || name[1] === "X" ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : all;
    }
    return ENTITIES[name.toLowerCase()] ?? all;
  });
}

/** The address of an `<a>`'s attributes, when it is an http(s) one. */
function hrefOf(attributes: string | undefined): string | undefined {
  const m = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/i.exec(attributes ?? "");
  const href = decode(m?.[1] ?? m?.[2] ?? m?.[3] ?? "").trim();
  return /^https?:\/\//i.test(href) ? href : undefined;
}

/** The text as a tree of the tags above; unbalanced closing tags are dropped, unclosed ones end with the text. */
export function parseDoc(text: string): DocNode[] {
  const root: { tag: string; children: DocNode[] } = { tag: "", children: [] };
  const stack = [root];
  const top = () => stack[stack.length - 1]!;
  const add = (t: string) => {
    if (t !== "") top().children.push(decode(t));
  };
  let last = 0;
  for (const m of text.matchAll(TAG)) {
    add(text.slice(last, m.index));
    last = m.index + m[0].length;
    const tag = m[2]!.toLowerCase();
    if (m[1] === "/") {
      const at = stack.findLastIndex((n) => n.tag === tag);
      if (at > 0) stack.length = at;
      continue;
    }
    const node = { tag, ...(tag === "a" ? { href: hrefOf(m[3]) } : {}), children: [] as DocNode[] };
    top().children.push(node);
    if (!VOID.has(tag)) stack.push(node);
  }
  add(text.slice(last));
  return root.children;
}

function render(nodes: DocNode[], inList = false): ReactNode[] {
  return nodes.map((n, i) => {
    if (typeof n === "string") return n;
    const children = render(n.children, n.tag === "ul" || n.tag === "ol");
    // The nodes of a text never move: their place is their key.
    const key = i;
    switch (n.tag) {
      case "code":
      case "tt":
        return <code key={key}>{children}</code>;
      case "b":
      case "strong":
        return <strong key={key}>{children}</strong>;
      case "i":
      case "em":
        return <em key={key}>{children}</em>;
      case "p":
        return (
          <span key={key} className="doc-p">
            {children}
          </span>
        );
      case "br":
        return <br key={key} />;
      case "ul":
        return (
          <ul key={key} className="doc-list">
            {children}
          </ul>
        );
      case "ol":
        return (
          <ol key={key} className="doc-list">
            {children}
          </ol>
        );
      case "li":
        return inList ? <li key={key}>{children}</li> : <Fragment key={key}>{children}</Fragment>;
      case "pre":
        return (
          <code key={key} className="doc-pre">
            {children}
          </code>
        );
      case "sup":
        return <sup key={key}>{children}</sup>;
      case "sub":
        return <sub key={key}>{children}</sub>;
      case "a":
        return n.href ? (
          <a key={key} href={n.href} target="_blank" rel="noopener noreferrer">
            {children}
          </a>
        ) : (
          <Fragment key={key}>{children}</Fragment>
        );
      default:
        return <Fragment key={key}>{children}</Fragment>;
    }
  });
}

/** A plugin's or a setting's documentation, its markup rendered (see above). */
export function ConnectDoc({ text }: { text: string }) {
  return <>{render(parseDoc(text))}</>;
}
