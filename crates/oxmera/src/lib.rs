//! oxmera: placeholder, filled in below.
