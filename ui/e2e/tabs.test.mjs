// One thread in two tabs (issue 39, item 4), in the playground: two pages of one browser show the
// same thread. While tab A's answer is being written, tab B's message is refused (the server's
// turn lock): B says the thread is busy, its words go back to its composer, nothing of it is
// stored. Once A's answer is done, B shows A's turn without a reload (it catches up), and B's
// message sent again reaches the model after A's whole turn; A then shows B's turn.
import assert from "node:assert/strict";
import { after, before, describe, test } from "./support.mjs"; // node:test's, see support.mjs
import { RETURNING_USER_SETTINGS, composer, frontendVersions, launchBrowser, openAssistant, openTarget, panel, reply, screenshot, send, sendButton, standinSkip, startHarness, storeSettings, watchPage } from "./support.mjs";

/** The user's texts the model received in a request (the reminders after them cut off). */
function userTexts(request) {
  return request.messages
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : m.content.map((p) => p.text ?? "").join("")))
    .map((text) => text.split("<system-reminder>")[0].trim());
}

describe("one thread in two tabs of the playground", () => {
  let harness;
  let browser;
  let pageA;
  let pageB;
  let problems;

  before(async () => {
    harness = await startHarness();
    browser = await launchBrowser({ width: 1200, height: 800 });
    pageA = await browser.context.newPage();
    problems = watchPage(pageA);
    await openTarget(pageA, harness.app);
    await openAssistant(pageA);
  });

  after(async () => {
    await browser?.close();
    await harness?.stop();
  });

  test("a turn refused while the other tab answers comes back to its composer; each tab then shows the other's turns", async () => {
    await harness.provider.script(reply.text("Answer one."));
    await send(pageA, "first from A");
    await panel(pageA).getByText("Answer one.").waitFor();
    await sendButton(pageA).waitFor();

    // tab B: the same playground in another tab; the user opens A's thread from the list
    pageB = await browser.context.newPage();
    problems.push(...watchPage(pageB));
    await openTarget(pageB, harness.app);
    await openAssistant(pageB);
    if (await panel(pageB).getByRole("button", { name: "Show the threads" }).isVisible()) {
      await panel(pageB).getByRole("button", { name: "Show the threads" }).click();
    }
    await panel(pageB).getByRole("group", { name: "Other threads" }).getByText("first from A").click();
    await panel(pageB).getByText("Answer one.").waitFor();

    // A's next answer is held open for a while; B sends meanwhile
    const held = reply.stream({ content: "Answer two" }, { pause: 4 }, { content: " is done." }, { finish_reason: "stop" });
    await harness.provider.script(held, reply.text("Answer for B."));
    await pageA.bringToFront();
    await send(pageA, "second from A");
    await panel(pageA).getByText("Answer two").waitFor();
    await pageB.bringToFront();
    await send(pageB, "from B meanwhile");
    await panel(pageB).getByText("Another answer is being written in this thread").waitFor();
    await screenshot(pageB, "tabs", "busy");
    assert.equal(await composer(pageB).inputValue(), "from B meanwhile"); // its words back
    assert.equal((await harness.provider.requests()).length, 2); // the model was not asked for B

    // A's answer ends; B catches up without a reload, and sends its message again
    await panel(pageA).getByText("Answer two is done.").waitFor({ timeout: 15_000 });
    await panel(pageB).getByText("Answer two is done.").waitFor({ timeout: 15_000 });
    await panel(pageB).getByText("second from A").waitFor();
    await composer(pageB).press("Enter");
    await panel(pageB).getByText("Answer for B.").waitFor();
    const requests = await harness.provider.requests();
    assert.equal(requests.length, 3);
    assert.deepEqual(userTexts(requests[2]), ["first from A", "second from A", "from B meanwhile"]);
    const said = requests[2].messages.filter((m) => m.role === "assistant").map((m) => m.content);
    assert.deepEqual(said, ["Answer one.", "Answer two is done."]);

    // and A shows B's turn
    await pageA.bringToFront();
    await panel(pageA).getByText("Answer for B.").waitFor({ timeout: 15_000 });
    await panel(pageA).getByText("from B meanwhile").waitFor();
    await screenshot(pageA, "tabs", "caught-up");
    assert.deepEqual(problems, []);
  });
});

// The panel's requests name ComfyUI's user as ComfyUI's own do (`Comfy-User: api.user`, which
// ComfyUI's user store sets on a multi-user server once the user is chosen), in the real frontends.
for (const version of frontendVersions()) {
  describe(`the Comfy-User header in ComfyUI frontend ${version} (stand-in)`, { skip: standinSkip(version) }, () => {
    let harness;
    let browser;
    let page;

    before(async () => {
      harness = await startHarness({ comfyFrontend: version, returningUser: true });
      await storeSettings(harness.app, RETURNING_USER_SETTINGS);
      browser = await launchBrowser();
      page = await browser.context.newPage();
      await openTarget(page, harness.app, { comfyui: true });
    });

    after(async () => {
      await browser?.close();
      await harness?.stop();
    });

    test("every request of the panel, the chat's stream too, carries the user ComfyUI's fetchApi sends", async () => {
      const seen = [];
      page.on("request", (request) => {
        const path = new URL(request.url()).pathname;
        if (path.startsWith("/api/assistant/") || path === "/api/settings") seen.push([request.method(), path, request.headers()["comfy-user"]]);
      });
      await page.evaluate(() => {
        window.app.api.user = "alice_1f3e"; // what ComfyUI's user store does after a multi-user login
      });
      await openAssistant(page);
      await harness.provider.script(reply.text("Hello, Alice."));
      await send(page, "hello");
      await panel(page).getByText("Hello, Alice.").waitFor();
      await page.evaluate(() => window.app.api.fetchApi("/settings")); // one of ComfyUI's own
      const chat = seen.filter(([method, path]) => method === "POST" && path === "/api/assistant/chat");
      assert.equal(chat.length, 1);
      const ours = seen.filter(([, path]) => path.startsWith("/api/assistant/"));
      assert.ok(ours.length > 3, JSON.stringify(seen));
      assert.deepEqual(new Set(seen.map(([, , user]) => user)), new Set(["alice_1f3e"]), JSON.stringify(seen));
    });
  });
}
