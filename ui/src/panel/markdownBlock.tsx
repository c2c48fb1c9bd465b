// One block of an answer's markdown (markdownBlocks.ts), drawn by react-markdown with the code
// blocks as assistant-ui's markdown primitive draws them (a header, then the code), but without the
// primitive: it reads the message part it is in and keeps a store of its own for each block, and an
// answer of 5,000 words is some 80 blocks (each one mounted when the thread is shown).
import { createContext, memo, useContext, type FC, type ReactNode } from "react";
import ReactMarkdown, { type Components, type ExtraProps } from "react-markdown";
import type { CodeHeaderProps } from "@assistant-ui/react-markdown";

/** Inside a `pre` that holds code: a code block, not inline code. */
const InCodeBlock = createContext(false);

const holdsCode = (node: ExtraProps["node"]) => node?.children.some((c) => c.type === "element" && c.tagName === "code") ?? true;

/** The text of `children` (react-markdown's code is a string, or elements when a plugin added some). */
function textOf(children: ReactNode): string {
  if (typeof children === "string") return children;
  if (Array.isArray(children)) return children.map(textOf).join("");
  if (children && typeof children === "object" && "props" in children) return textOf((children.props as { children?: ReactNode }).children);
  return "";
}

const language = (className: string | undefined) => /language-(\S+)/.exec(className ?? "")?.[1] ?? "";

/** `components` with `pre` and `code` drawn as code blocks with `CodeHeader` above. */
export function withCodeBlocks(components: Components, CodeHeader: FC<CodeHeaderProps>): Components {
  return {
    ...components,
    pre: ({ node, children, ...rest }) => (holdsCode(node) ? <InCodeBlock.Provider value>{children}</InCodeBlock.Provider> : <pre {...rest}>{children}</pre>),
    code: function Code({ node, children, ...rest }) {
      const block = useContext(InCodeBlock);
      if (!block) return <code {...rest}>{children}</code>;
      // (the markup of assistant-ui's primitive, its empty classes included)
      return (
        <>
          <CodeHeader node={node} language={language(rest.className)} code={textOf(children)} />
          <pre className="">
            <code {...rest} className={rest.className ?? ""}>
              {children}
            </code>
          </pre>
        </>
      );
    },
  };
}

type Plugins = NonNullable<Parameters<typeof ReactMarkdown>[0]["remarkPlugins"]>;

/** A block, parsed again only when its own text changes. */
export const MarkdownBlock: FC<{ block: string; components: Components; remarkPlugins: Plugins }> = memo(({ block, components, remarkPlugins }) => (
  <ReactMarkdown components={components} remarkPlugins={remarkPlugins}>
    {block}
  </ReactMarkdown>
));
