// The earlier blocks of a long answer, drawn as markdown a few at a time after the answer is
// shown (MarkdownText): a 5,000-word answer is some 80 blocks, and parsing them all in the task
// that shows the thread (opening it, reopening it, a reload) blocked the page for a quarter of a
// second. Each task parses about BUDGET characters, so a keystroke or a streamed chunk waits
// at most that long.

/** Characters of markdown parsed in one task: some 5 blocks of an answer (the row is measured
 * again after each task, and a busy machine parses slower). */
const BUDGET = 2000;

interface Job {
  size: number;
  run: () => void;
  cancelled: boolean;
}

const queue: Job[] = [];
let scheduled = false;

function pump(): void {
  scheduled = false;
  let spent = 0;
  while (queue.length > 0 && spent < BUDGET) {
    const job = queue.shift()!;
    if (job.cancelled) continue;
    spent += job.size;
    job.run();
  }
  schedule();
}

function schedule(): void {
  if (scheduled || queue.length === 0) return;
  scheduled = true;
  setTimeout(pump, 0);
}

/** Runs `run` in a later task, with other jobs up to BUDGET characters (`size`); the returned
 * function cancels it. */
export function later(size: number, run: () => void): () => void {
  const job: Job = { size, run, cancelled: false };
  queue.push(job);
  schedule();
  return () => {
    job.cancelled = true;
  };
}
