// The command line both JavaScript clients take:
//   node client.mjs [--out FILE] [--label TRANSPORT] (--url URL | --stdio COMMAND [ARG...])
// The TypeScript SDK's client.mjs also takes the server of its cancel check (../tasks.json):
//   [--cancel-url URL | --cancel-stdio COMMAND [ARG...]]

const USAGE = "usage: node client.mjs [--out FILE] [--label TRANSPORT] (--url URL | --stdio COMMAND [ARG...])";
const CANCEL_USAGE = "[--cancel-url URL | --cancel-stdio COMMAND [ARG...]]";

let cancelTaken = false;

/** Prints what is wrong and the usage, then exits 2. */
export function usage(message) {
  console.error(`client.mjs: ${message}`);
  console.error(cancelTaken ? USAGE.replace(" (--url", ` ${CANCEL_USAGE} (--url`) : USAGE);
  process.exit(2);
}

/** A server's command: the words given, or a single word holding spaces split on whitespace. */
function command(words, flag) {
  const argv = words.length === 1 ? words[0].trim().split(/\s+/) : words;
  if (argv.length === 0 || argv[0] === "") usage(`${flag} needs a command`);
  return argv;
}

/**
 * `{url} | {stdio: [command, ...args]}`, plus `out` and `label` when given. With `cancel`, also
 * `cancelUrl` or `cancelStdio` when given: `--stdio` and `--cancel-stdio` each take the words
 * after them up to the other one, or to the end.
 */
export function parseArgs(argv, { cancel = false } = {}) {
  cancelTaken = cancel;
  const options = {};
  const commands = cancel ? ["--stdio", "--cancel-stdio"] : ["--stdio"];
  const values = cancel ? ["--url", "--out", "--label", "--cancel-url"] : ["--url", "--out", "--label"];
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (commands.includes(flag)) {
      const rest = argv.slice(i + 1);
      const end = rest.findIndex((word) => commands.includes(word) && word !== flag);
      const words = end === -1 ? rest : rest.slice(0, end);
      options[flag === "--stdio" ? "stdio" : "cancelStdio"] = command(words, flag);
      i += words.length;
      continue;
    }
    if (!values.includes(flag)) usage(`unknown argument ${JSON.stringify(flag)}`);
    if (i + 1 >= argv.length) usage(`${flag} needs a value`);
    options[flag === "--cancel-url" ? "cancelUrl" : flag.slice(2)] = argv[++i];
  }
  if (!options.stdio === !options.url) usage("give exactly one of --url and --stdio");
  if (options.cancelStdio && options.cancelUrl) usage("give at most one of --cancel-url and --cancel-stdio");
  return options;
}
