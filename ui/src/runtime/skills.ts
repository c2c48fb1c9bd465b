// The skills the composer offers: the built-in ones and the user's, each slug once (a built-in
// one first); null when neither list could be read.
import { requestJson, type SkillInfo } from "../server/api";

export async function fetchSkills(): Promise<SkillInfo[] | null> {
  const lists = await Promise.allSettled([
    requestJson<{ skills: SkillInfo[] }>("/api/assistant/system-context/skills"),
    requestJson<{ skills: SkillInfo[] }>("/api/assistant/user-context/skills"),
  ]);
  const seen = new Set<string>();
  const skills: SkillInfo[] = [];
  for (const result of lists) {
    if (result.status !== "fulfilled") continue;
    for (const skill of result.value.skills ?? []) {
      if (seen.has(skill.slug)) continue;
      seen.add(skill.slug);
      skills.push(skill);
    }
  }
  return lists.some((r) => r.status === "fulfilled") ? skills : null;
}
