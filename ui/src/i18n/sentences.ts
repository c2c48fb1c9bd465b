// Sentences made of parts (a status and what follows from it): English and Arabic put a space
// between sentences, Chinese and Japanese write them one after the other.
import { getLocale } from ".";

const UNSPACED = /^(zh|ja)\b/i;

/** The sentences given (empty parts left out), joined as the locale writes them. */
export function sentences(...parts: (string | null | undefined | false)[]): string {
  const gap = UNSPACED.test(getLocale()) ? "" : " ";
  return parts.filter((part): part is string => !!part).join(gap);
}
