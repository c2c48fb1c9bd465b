// What asks the server again by itself waits while ComfyUI's socket says the server is away.
import { describe, expect, it } from "vitest";
import { serverPresence } from "./serverPresence";

describe("serverPresence", () => {
  it("resolves at once while the server is there, and while it is away only once it is back", async () => {
    const socket = new EventTarget();
    const { whenHere } = serverPresence(socket);
    const signal = new AbortController().signal;
    await whenHere(signal); // (there)
    socket.dispatchEvent(new Event("reconnecting"));
    let resolved = false;
    const waiting = whenHere(signal).then(() => {
      resolved = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(resolved).toBe(false);
    socket.dispatchEvent(new Event("reconnected"));
    await waiting;
    expect(resolved).toBe(true);
  });

  it("is always there for an api without events", async () => {
    await serverPresence({} as never).whenHere(new AbortController().signal);
    await serverPresence(undefined).whenHere(new AbortController().signal);
  });
});
