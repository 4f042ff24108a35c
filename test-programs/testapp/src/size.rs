//! Window sizes on the command line (`WxH`, `FRAME:WxH`), for the test
//! app and the GL test program (which includes this file).

pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("`{s}` is not WxH"))?;
    let w: u32 = w.parse().map_err(|_| format!("bad width in `{s}`"))?;
    let h: u32 = h.parse().map_err(|_| format!("bad height in `{s}`"))?;
    if w == 0 || h == 0 || w > 16384 || h > 16384 {
        return Err(format!("size `{s}` out of range 1..16384"));
    }
    Ok((w, h))
}

pub fn parse_resize(s: &str) -> Result<(u64, (u32, u32)), String> {
    let (f, size) = s
        .split_once(':')
        .ok_or_else(|| format!("`{s}` is not FRAME:WxH"))?;
    let f: u64 = f
        .parse()
        .map_err(|_| format!("bad frame number in `{s}`"))?;
    Ok((f, parse_size(size)?))
}
