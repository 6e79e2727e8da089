// The yes/no question before `apply` and `destroy` change anything. readline/promises' question()
// never settles when its input ends (stdin closed, `</dev/null`): the process would exit 13 with the
// stack lock held. End of input is the answer "no"; Ctrl-C typed on a terminal (readline reads it as a
// key, not a signal) is sent on as SIGINT, so it takes the same way out as a signal from outside.
import readline from 'node:readline';

export function askYes(question: string, input: NodeJS.ReadableStream = process.stdin, output: NodeJS.WritableStream = process.stdout): Promise<boolean> {
  const rl = readline.createInterface({ input, output });
  return new Promise<boolean>((resolve) => {
    rl.once('close', () => resolve(false)); // after an answer this is a no-op: the promise has settled
    rl.on('SIGINT', () => {
      rl.removeAllListeners('close'); // not a "no": the signal's way out says what happened
      rl.close();
      // the handlers now, not a signal delivered later: with stdin closed nothing may keep the process up till then
      if (process.listenerCount('SIGINT') > 0) process.emit('SIGINT', 'SIGINT');
      else process.kill(process.pid, 'SIGINT');
    });
    rl.question(question, (answer) => {
      resolve(answer.trim() === 'yes');
      rl.close();
    });
  });
}
