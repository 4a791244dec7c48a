/**
 * `agentctl completion bash|zsh`: shell completion scripts generated from the command
 * table, so they offer exactly the commands and flags agentctl accepts.
 */
import { expectPositionals } from "../args.js";
import type { Command, CommandGroup } from "../command.js";
import { GLOBAL_FLAGS } from "../help.js";

function flagWords(flags: Command["flags"]): string[] {
  return Object.entries(flags).flatMap(([name, spec]) => [
    `--${name}`,
    ...(spec.short === undefined ? [] : [`-${spec.short}`]),
  ]);
}

function valueFlags(groups: readonly CommandGroup[]): string[] {
  const names = new Set<string>();
  const add = (flags: Command["flags"]): void => {
    for (const [name, spec] of Object.entries(flags)) {
      if (spec.type !== "string") continue;
      names.add(`--${name}`);
      if (spec.short !== undefined) names.add(`-${spec.short}`);
    }
  };
  add(GLOBAL_FLAGS);
  for (const g of groups) for (const c of Object.values(g.commands)) add(c.flags);
  return [...names].sort();
}

/** A bash completion script for agentctl (`source <(agentctl completion bash)`). */
export function bashCompletion(groups: readonly CommandGroup[]): string {
  const subcommandCases = groups
    .map(
      (g) =>
        `      ${g.name}) COMPREPLY=($(compgen -W "${Object.keys(g.commands)
          .filter((name) => name !== "")
          .join(" ")}" -- "$cur")) ;;`,
    )
    .join("\n");
  const flagCases = groups
    .flatMap((g) =>
      Object.entries(g.commands).map(
        ([name, c]) => `    "${g.name} ${name}") flags="${flagWords(c.flags).join(" ")}" ;;`,
      ),
    )
    .join("\n");
  return `# agentctl bash completion: source <(agentctl completion bash)
_agentctl() {
  local cur prev group="" sub="" i w skip=""
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  local value_flags=" ${valueFlags(groups).join(" ")} "
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    if [[ -n "$skip" ]]; then skip=""; continue; fi
    if [[ "$w" == -* ]]; then
      [[ "$value_flags" == *" $w "* ]] && skip=1
      continue
    fi
    if [[ -z "$group" ]]; then group="$w"; elif [[ -z "$sub" ]]; then sub="$w"; fi
  done
  if [[ "$value_flags" == *" $prev "* ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
    return
  fi
  if [[ -z "$group" && "$cur" != -* ]]; then
    COMPREPLY=($(compgen -W "${[...groups.map((g) => g.name), "help"].join(" ")}" -- "$cur"))
    return
  fi
  if [[ -z "$sub" && "$cur" != -* ]]; then
    case "$group" in
${subcommandCases}
    esac
    return
  fi
  local flags=""
  case "$group $sub" in
${flagCases}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags ${flagWords(GLOBAL_FLAGS).join(" ")}" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -F _agentctl agentctl
`;
}

/** A zsh completion script: the bash one through zsh's bashcompinit. */
export function zshCompletion(groups: readonly CommandGroup[]): string {
  return `# agentctl zsh completion: source <(agentctl completion zsh)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(groups)}`;
}

/** The `completion` command group; `groups` loads the command table at run time. */
export function createCompletionGroup(
  groups: () => Promise<readonly CommandGroup[]>,
): CommandGroup {
  const script = (summary: string, make: (g: readonly CommandGroup[]) => string): Command => ({
    summary,
    flags: {},
    async run(ctx, { positionals }) {
      expectPositionals(positionals, []);
      ctx.stdout.write(make(await groups()));
      return 0;
    },
  });
  return {
    name: "completion",
    summary: "Print a shell completion script",
    commands: {
      bash: script("Bash completion: source <(agentctl completion bash)", bashCompletion),
      zsh: script("Zsh completion: source <(agentctl completion zsh)", zshCompletion),
    },
  };
}
