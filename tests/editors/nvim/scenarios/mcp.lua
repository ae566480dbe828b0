-- An MCP server from setup({ mcp_servers }): started once trusted (asked first, like a
-- .mcp.json); the approval of its destructive tool shows server, tool and arguments (prompt
-- and preview split) and is rejected; :checkhealth lists the server.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ mcp_servers = vim.json.decode(os.getenv('OP_MCP')) })
  H.track()
  H.out.prompts, H.out.preview, H.out.preview_ft = {}, {}, nil
  vim.ui.select = function(items, opts, on_choice)
    table.insert(H.out.prompts, opts.prompt)
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      local b = vim.api.nvim_win_get_buf(w)
      if vim.api.nvim_buf_get_name(b):find('openprogram://approve/', 1, true) then
        H.out.preview = H.lines(b)
        H.out.preview_ft = vim.bo[b].filetype
        H.out.winbar = vim.wo[w].winbar
      end
    end
    vim.defer_fn(function()
      for _, want in ipairs({ 'Start it this time', 'Reject' }) do
        for _, it in ipairs(items) do
          if (opts.format_item and opts.format_item(it) or it) == want then
            return on_choice(it)
          end
        end
      end
      on_choice(nil)
    end, 20)
  end

  H.turn('OpenProgram delete the note', 1)
  H.out.note_left = H.read('../notes/a.txt')
  H.out.lines = H.panel_lines()
  vim.cmd('checkhealth openprogram')
  H.out.report = H.lines(vim.api.nvim_get_current_buf())
end)
