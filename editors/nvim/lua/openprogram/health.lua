--[[
`:checkhealth openprogram`: the server executable and its version, whether commands run in
the sandbox (bubblewrap), the model configuration, the Neovim version, and whether a client is
running for this workspace, and its MCP servers, and how a clipboard image is pasted.
]]

local M = {}

local health = vim.health

--- Run the checks.
function M.check()
  local config = require('openprogram.config')
  local opts = config.options

  health.start('Neovim')
  local v = vim.version()
  local vs = ('%d.%d.%d'):format(v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.10') == 1 then
    health.ok('Neovim ' .. vs)
  else
    health.error('Neovim ' .. vs .. ' is too old', { 'openprogram needs Neovim 0.10 or newer' })
  end
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok("vim.lsp.enable('openprogram') is available (lsp/openprogram.lua)")
  else
    health.info('Neovim 0.10: the panel starts the server itself; vim.lsp.enable needs 0.11')
  end

  health.start('Server')
  local exe = opts.cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    health.error(('%s is not executable'):format(exe), {
      'install it from a checkout of openprogram-lsp: ./scripts/quickstart (it makes .venv/bin/openprogram-lsp)'
        .. ' or pipx install /path/to/openprogram-lsp (it is not published on PyPI)',
      "or point at it: require('openprogram').setup({ cmd = { '/path/to/openprogram-lsp', 'serve' } })",
    })
  else
    health.ok(('command: %s (%s)'):format(table.concat(opts.cmd, ' '), vim.fn.exepath(exe)))
    local ok, res = pcall(function()
      return vim.system({ exe, '--version' }, { text = true }):wait(10000)
    end)
    if ok and res and res.code == 0 then
      local line = vim.trim(res.stdout or '')
      local server = line:match('(%d+%.%d+[%w%.%-%+]*)%s*$')
      local plugin = require('openprogram').version
      if server == plugin then
        health.ok(('version: %s (matches the plugin, %s)'):format(line, plugin))
      else
        health.warn(('version: %s does not match the plugin (%s)'):format(line, plugin), {
          ('install openprogram-lsp %s (the server and the plugin come from one release),'):format(plugin)
            .. ' or load the plugin the server carries: openprogram-lsp editor nvim',
        })
      end
    else
      local why = ok and res and vim.trim((res.stderr or '') .. ' exit ' .. tostring(res.code)) or tostring(res)
      health.warn('`' .. exe .. ' --version` failed: ' .. why)
    end
  end

  health.start('Clipboard images')
  local clip = require('openprogram.attach').clipboard_command()
  local hint = "set clipboard_image in setup(), e.g. { 'wl-paste', '--type', 'image/png' }"
  if clip and vim.fn.executable(clip[1]) == 1 then
    health.ok(':OpenProgramImage with no file pastes through: ' .. table.concat(clip, ' '))
  elseif clip then
    health.warn(('clipboard_image: %s is not executable'):format(clip[1]), { hint })
  else
    health.info(':OpenProgramImage with no file needs a clipboard command; none of wl-paste (Wayland), '
      .. 'xclip (X11), pngpaste (macOS) was found', { hint })
  end

  health.start('Sandbox')
  if vim.fn.executable(exe) == 1 then
    local ok, res = pcall(function()
      return vim.system({ exe, 'sandbox', '--json' }, { text = true }):wait(10000)
    end)
    local info = ok and res and res.stdout and pcall(vim.json.decode, res.stdout) and vim.json.decode(res.stdout) or nil
    local err = ok and res and vim.trim(res.stderr or '') or ''
    if type(info) ~= 'table' and err ~= '' then
      health.error('`' .. exe .. ' sandbox` failed: ' .. err)  -- e.g. a bad OPENPROGRAM_SANDBOX_* value
    elseif type(info) ~= 'table' then
      health.warn('`' .. exe .. ' sandbox` gave no answer; commands may run unsandboxed')
    elseif info.sandboxed then
      health.ok(info.message)
    elseif info.mode == 'off' then
      health.warn(info.message, { 'unset OPENPROGRAM_SANDBOX to sandbox commands again' })
    else
      health.error(info.message, {
        'install bubblewrap: scripts/install-sandbox (or: sudo apt-get install bubblewrap)',
        'see docs/sandbox.md for what an unsandboxed command can reach',
      })
    end
  end
  if vim.fn.executable('bwrap') == 1 then
    health.info('bwrap: ' .. vim.fn.exepath('bwrap'))
  else
    health.info('bwrap is not on PATH')
  end

  health.start('Model')
  local model = opts.model or vim.env.OPENPROGRAM_MODEL
  if not model or model == '' then
    health.info("no model configured: the server uses the offline model (setup({ model = 'openai:...' }))")
  else
    local source = opts.model and 'setup()' or '$OPENPROGRAM_MODEL'
    health.ok(('model: %s (from %s)'):format(model, source))
    local provider = model:match('^(%w+):')
    if provider == 'openai' and not vim.env.OPENAI_API_KEY and not vim.env.OPENAI_BASE_URL then
      health.warn('OPENAI_API_KEY is not set in the environment Neovim passes to the server')
    elseif provider == 'anthropic' and not vim.env.ANTHROPIC_API_KEY then
      health.warn('ANTHROPIC_API_KEY is not set in the environment Neovim passes to the server')
    elseif provider == 'scripted' then
      local file = model:sub(#'scripted:' + 1)
      if vim.fn.filereadable(file) ~= 1 then
        health.error('scripted model file not readable: ' .. file)
      end
    end
  end
  health.info('permission mode: ' .. (opts.permission_mode or 'server default (ask)'))

  health.start('Client')
  local c = require('openprogram.client').find()
  if c then
    health.ok(('running: client %d for %s'):format(c.id, tostring(c.root_dir)))
  else
    health.info('no client running for this workspace (it starts with :OpenProgram)')
  end

  require('openprogram.mcp').check(health, opts)
end

return M
