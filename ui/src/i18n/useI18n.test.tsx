import { vi } from "vitest";

// React's test helpers (act) exist only in its development build (see Panel.test.tsx).
const nodeEnv = vi.hoisted(() => {
  const before = process.env["NODE_ENV"];
  process.env["NODE_ENV"] = "test";
  return before;
});

import { act, cleanup, render, screen } from "@testing-library/react";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ApprovalCard } from "../panel/ApprovalCard";
import { setLocale } from ".";

afterEach(() => {
  cleanup();
  setLocale("en");
});
afterAll(() => {
  process.env["NODE_ENV"] = nodeEnv;
});

describe("useI18n", () => {
  it("re-renders a shown component in the new locale, plural forms included", () => {
    const nodes = ["KSampler", "VAE Decode", ...Array.from({ length: 12 }, (_, i) => `Node ${i}`)];
    render(<ApprovalCard request={{ kind: "graph-edit", action: "Remove 14 nodes", nodes }} onAnswer={() => {}} />);
    expect(screen.getByRole("button", { name: "Allow" })).toBeTruthy();
    expect(screen.getByText("and 2 more")).toBeTruthy();
    act(() => setLocale("zh"));
    expect(screen.getByRole("button", { name: "允许" })).toBeTruthy();
    expect(screen.getByRole("group", { name: "助手在执行前征求你的同意" })).toBeTruthy();
    act(() => setLocale("ar"));
    expect(screen.getByRole("button", { name: "رفض" })).toBeTruthy();
    expect(screen.getByText("وعقدتان أخريان")).toBeTruthy(); // Arabic's dual, not "and 2 more"
  });
});
