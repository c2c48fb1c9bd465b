// Two people on one ComfyUI started with --multi-user (issue 39), in the real frontends on the
// stand-in's multi-user mode: Alice and Bob, made with ComfyUI's POST /api/users, each in their
// own browser (the frontend picks its user from localStorage `Comfy.userId` and names it in the
// `comfy-user` header). Both attach an image and chat at once through the scripted provider:
// each request to the model holds only its own user's words; each sees their own image (its URL
// names its user, as an <img src> sends no header), their own threads and skills, and nothing of
// the other's — the other's attachment answers 404 to them.
import assert from "node:assert/strict";
import { after, before, describe, test } from "./support.mjs"; // node:test's, see support.mjs
import { RETURNING_USER_SETTINGS, comfyPng, composer, frontendVersions, launchBrowser, lastUserText, openAssistant, openTarget, panel, reply, screenshot, send, standinSkip, startHarness, watchPage } from "./support.mjs";

const PEOPLE = {
  alice: { said: "alice-words-51c2: a lighthouse", skill: "alice-notes", size: [32, 24] },
  bob: { said: "bob-words-9e07: a forest", skill: "bob-notes", size: [20, 10] },
};

async function call(baseUrl, user, method, path, body) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { "content-type": "application/json", ...(user ? { "comfy-user": user } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} as ${user}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

for (const version of frontendVersions()) {
  describe(`two users on one multi-user ComfyUI, frontend ${version} (stand-in)`, { skip: standinSkip(version) }, () => {
    let harness;
    const people = {}; // name -> {id, browser, page, problems}

    before(async () => {
      harness = await startHarness({ comfyFrontend: version, multiUser: true });
      for (const [name, person] of Object.entries(PEOPLE)) {
        const id = await call(harness.app, null, "POST", "/api/users", { username: name });
        await call(harness.app, id, "POST", "/api/settings", RETURNING_USER_SETTINGS);
        const skill = { slug: person.skill, name: person.skill, description: `${name}'s own skill`, body: `Only ${name} has this.` };
        await call(harness.app, id, "POST", "/api/assistant/user-context/skills", skill);
        const browser = await launchBrowser({ width: 1200, height: 800 });
        await browser.context.addInitScript((user) => localStorage.setItem("Comfy.userId", user), id);
        const page = await browser.context.newPage();
        // (ComfyUI's own page loads user.css without the header, refused as ComfyUI refuses it, and
        // asks api.comfy.org, offline here: only our routes' failures and page errors count)
        const failed = [];
        page.on("response", (r) => {
          const path = new URL(r.url()).pathname;
          if (r.status() >= 400 && path.startsWith("/api/assistant/")) failed.push(`${r.status()} ${r.request().method()} ${path}`);
        });
        people[name] = { id, browser, page, failed, problems: watchPage(page) };
      }
      await Promise.all(Object.values(people).map(({ page }) => openTarget(page, harness.app, { comfyui: true })));
      for (const { page } of Object.values(people)) await openAssistant(page);
    });

    after(async () => {
      for (const { browser } of Object.values(people)) await browser?.close();
      await harness?.stop();
    });

    test("Alice and Bob chat at once, each with an image: nothing of one reaches the other or the other's model request", { timeout: 120_000 }, async () => {
      const { alice, bob } = people;
      assert.deepEqual(await alice.page.evaluate(() => window.app.api.user), alice.id); // (the frontend took its user)
      assert.deepEqual(await bob.page.evaluate(() => window.app.api.user), bob.id);

      // each attaches an image of their own size
      for (const [name, { page }] of Object.entries(people)) {
        const [width, height] = PEOPLE[name].size;
        const chooser = page.waitForEvent("filechooser");
        await panel(page).getByRole("button", { name: "Attach files" }).click();
        await (await chooser).setFiles([{ name: `${name}.png`, mimeType: "image/png", buffer: comfyPng({ width, height }) }]);
        await panel(page).getByLabel("Attached files").getByText(new RegExp(`^PNG ${width}×${height}`)).waitFor({ timeout: 20_000 });
      }

      // both send at once; each answer is held open until both requests reached the model
      const held = () => reply.stream({ content: "Noted" }, { pause: 3 }, { content: ", thank you." }, { finish_reason: "stop" });
      await harness.provider.script(held(), held());
      await Promise.all(Object.entries(people).map(([name, { page }]) => send(page, PEOPLE[name].said)));
      await harness.provider.waitFor((s) => s.requests.length === 2 && s.finished === 0, "both turns at once");
      for (const { page } of Object.values(people)) {
        await panel(page).getByText("Noted, thank you.").waitFor({ timeout: 30_000 });
      }
      const requests = await harness.provider.requests();
      const asked = requests.map((r) => JSON.stringify(r.messages));
      for (const name of ["alice", "bob"]) {
        const other = name === "alice" ? "bob" : "alice";
        const own = requests.filter((r) => lastUserText(r).startsWith(PEOPLE[name].said));
        assert.equal(own.length, 1, `${name}'s turn reached the model once`);
        const text = JSON.stringify(own[0].messages);
        assert.ok(!text.includes(PEOPLE[other].said.split(":")[0]), `${other}'s words in ${name}'s request`);
        assert.ok(!text.includes(PEOPLE[other].skill), `${other}'s skill in ${name}'s request`);
      }
      assert.equal(asked.length, 2);

      // each sees their own image, served to the user its URL names
      const shown = {};
      for (const [name, { id, page }] of Object.entries(people)) {
        const thumb = panel(page).locator(".cua-msg-user").last().locator("img.cua-chip-thumb");
        await thumb.waitFor();
        await page.waitForFunction((img) => img.complete, await thumb.elementHandle());
        const image = await thumb.evaluate((img) => ({ src: img.getAttribute("src"), width: img.naturalWidth, height: img.naturalHeight }));
        assert.deepEqual([image.width, image.height], PEOPLE[name].size, `${name}'s image loaded`);
        assert.match(image.src, new RegExp(`^/api/assistant/attachments/att_[\\w-]+\\?user=${encodeURIComponent(id)}$`));
        shown[name] = image.src;
        await screenshot(page, `teams-${version}`, name);
      }
      // the other's attachment is none of theirs: 404, by URL or by the panel's header alike
      for (const [name, other] of [["alice", "bob"], ["bob", "alice"]]) {
        const { id, page } = people[name];
        const theirs = shown[other].replace(/\?user=.*$/, "");
        const statuses = await page.evaluate(
          async ([path, user]) => [
            (await fetch(`${path}?user=${encodeURIComponent(user)}`)).status,
            (await fetch(path, { headers: { "Comfy-User": user } })).status,
          ],
          [theirs, id],
        );
        assert.deepEqual(statuses, [404, 404], `${name} reading ${other}'s attachment`);
      }

      // after a reload: each has their own thread and skill, and nothing of the other's
      for (const [name, { page }] of Object.entries(people)) {
        const other = name === "alice" ? "bob" : "alice";
        const threads = page.waitForResponse((r) => new URL(r.url()).pathname === "/api/assistant/threads" && r.request().method() === "GET");
        await openTarget(page, harness.app, { comfyui: true });
        await openAssistant(page);
        const listed = (await (await threads).json()).threads ?? [];
        const titles = JSON.stringify(listed);
        assert.ok(titles.includes(PEOPLE[name].said.split(":")[0]), `${name}'s thread listed: ${titles}`);
        assert.ok(!titles.includes(PEOPLE[other].said.split(":")[0]), `${other}'s thread listed to ${name}: ${titles}`);
        await panel(page).locator(".cua-user-text").getByText(PEOPLE[name].said).waitFor({ timeout: 20_000 });
        await composer(page).fill("/skill ");
        const options = panel(page).getByRole("listbox", { name: "Commands" }).getByRole("option");
        await options.first().waitFor();
        const offered = (await options.allTextContents()).join("\n");
        assert.ok(offered.includes(PEOPLE[name].skill), `${name}'s skill offered: ${offered}`);
        assert.ok(!offered.includes(PEOPLE[other].skill), `${other}'s skill offered to ${name}`);
        await composer(page).press("Escape");
        await composer(page).fill("");
        assert.ok(!(await panel(page).textContent()).includes(PEOPLE[other].said.split(":")[0]));
      }
      for (const [name, { failed, problems }] of Object.entries(people)) {
        const other = name === "alice" ? "bob" : "alice";
        const theirs = `404 GET ${shown[other].replace(/\?user=.*$/, "")}`;
        assert.deepEqual(failed, [theirs, theirs], `${name}: only the other's attachment failed`);
        assert.deepEqual(problems.filter((p) => p.startsWith("pageerror")), [], name);
      }
    });
  });
}
