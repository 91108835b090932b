//! Piece images: the cburnett SVGs embedded in the binary, rasterized for each on-screen size and
//! cached as textures, so pieces stay crisp at any board size and display scale.

use eframe::egui::{self, ColorImage, TextureHandle, TextureOptions};
use egui::load::SizeHint;
use shakmaty::{Color, Piece, Role};

/// The embedded cburnett set (GPL-2.0-or-later, Colin M.L. Burnett; see assets/pieces/cburnett/SOURCE.md),
/// in [`piece_index`] order.
const CBURNETT: [&[u8]; 12] = [
    include_bytes!("../../assets/pieces/cburnett/wP.svg"),
    include_bytes!("../../assets/pieces/cburnett/wN.svg"),
    include_bytes!("../../assets/pieces/cburnett/wB.svg"),
    include_bytes!("../../assets/pieces/cburnett/wR.svg"),
    include_bytes!("../../assets/pieces/cburnett/wQ.svg"),
    include_bytes!("../../assets/pieces/cburnett/wK.svg"),
    include_bytes!("../../assets/pieces/cburnett/bP.svg"),
    include_bytes!("../../assets/pieces/cburnett/bN.svg"),
    include_bytes!("../../assets/pieces/cburnett/bB.svg"),
    include_bytes!("../../assets/pieces/cburnett/bR.svg"),
    include_bytes!("../../assets/pieces/cburnett/bQ.svg"),
    include_bytes!("../../assets/pieces/cburnett/bK.svg"),
];

/// How many sizes are kept at once (the current one and a few recent ones, e.g. while resizing).
const CACHED_SIZES: usize = 3;

/// The position of a piece in the 12-image set: white pawn..king, then black pawn..king.
pub fn piece_index(piece: Piece) -> usize {
    let role = match piece.role {
        Role::Pawn => 0,
        Role::Knight => 1,
        Role::Bishop => 2,
        Role::Rook => 3,
        Role::Queen => 4,
        Role::King => 5,
    };
    role + if piece.color == Color::White { 0 } else { 6 }
}

/// Rasterizes one piece to a square image `size_px` pixels wide.
pub fn rasterize(piece: Piece, size_px: u32) -> Result<ColorImage, String> {
    let options = resvg::usvg::Options::default();
    egui_extras::image::load_svg_bytes_with_size(
        CBURNETT[piece_index(piece)],
        SizeHint::Size { width: size_px, height: size_px, maintain_aspect_ratio: true },
        &options,
    )
}

/// Piece textures per pixel size.
#[derive(Default)]
pub struct PieceTextures {
    /// (size in physical pixels, the 12 textures), most recently used last.
    cache: Vec<(u32, Vec<TextureHandle>)>,
    /// The first rasterization error, if any (then pieces are drawn as letters).
    error: Option<String>,
}

impl PieceTextures {
    /// The 12 textures for squares of `size_px` physical pixels, rasterizing them on first use.
    /// `None` if the SVGs could not be rasterized (see [`Self::error`]).
    pub fn get(&mut self, ctx: &egui::Context, size_px: u32) -> Option<&[TextureHandle]> {
        let size_px = size_px.clamp(8, 1024);
        if let Some(i) = self.cache.iter().position(|(s, _)| *s == size_px) {
            let entry = self.cache.remove(i);
            self.cache.push(entry);
        } else {
            let mut textures = Vec::with_capacity(12);
            for color in Color::ALL {
                for role in Role::ALL {
                    let piece = Piece { color, role };
                    match rasterize(piece, size_px) {
                        Ok(image) => textures.push(ctx.load_texture(
                            format!("piece-{}-{size_px}", piece.char()),
                            image,
                            TextureOptions::LINEAR,
                        )),
                        Err(e) => {
                            self.error.get_or_insert(e);
                            return None;
                        }
                    }
                }
            }
            self.cache.push((size_px, textures));
            if self.cache.len() > CACHED_SIZES {
                self.cache.remove(0);
            }
        }
        self.cache.last().map(|(_, t)| t.as_slice())
    }

    /// Why the pieces could not be rasterized, if they could not.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_piece_rasterizes_at_several_sizes() {
        for size in [16, 45, 97] {
            for color in Color::ALL {
                for role in Role::ALL {
                    let img = rasterize(Piece { color, role }, size).expect("embedded SVG");
                    assert_eq!(img.size, [size as usize, size as usize]);
                    // Something is drawn: some pixel is opaque.
                    assert!(img.pixels.iter().any(|p| p.a() > 200), "{role:?} {color:?} at {size}");
                }
            }
        }
    }

    #[test]
    fn indices_cover_the_set() {
        let mut seen = [false; 12];
        for color in Color::ALL {
            for role in Role::ALL {
                seen[piece_index(Piece { color, role })] = true;
            }
        }
        assert!(seen.iter().all(|s| *s));
    }
}
