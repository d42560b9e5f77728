package simulate

// good is a product a merchant sells: its unit price range in cents, the
// most a basket usually holds, and whether it is taxed or FSA/HSA-eligible.
type good struct {
	name   string
	lo, hi int64
	maxQty int
	flags  goodFlag
	desc   string
}

type goodFlag uint8

const (
	taxed goodFlag = 1 << iota
	fsaEligible
	// shipped marks a physical good in a store that mostly sells digital
	// things, so the order goes out by parcel.
	shipped
	untaxed goodFlag = 0
)

var produce = []good{
	{"Bananas, bunch", 129, 229, 2, untaxed, "About 6 bananas"},
	{"Organic Gala Apples, 3 lb bag", 449, 649, 1, untaxed, ""},
	{"Hass Avocados", 89, 179, 4, untaxed, "Medium, each"},
	{"Strawberries, 1 lb", 299, 499, 2, untaxed, ""},
	{"Blueberries, 18 oz", 399, 599, 2, untaxed, ""},
	{"Baby Spinach, 5 oz", 299, 399, 2, untaxed, "Organic, triple washed"},
	{"Roma Tomatoes", 49, 99, 6, untaxed, "Each"},
	{"Yellow Onions, 3 lb bag", 299, 449, 1, untaxed, ""},
	{"Russet Potatoes, 5 lb bag", 349, 549, 1, untaxed, ""},
	{"Broccoli Crowns", 179, 299, 2, untaxed, "About 1 lb"},
	{"Lemons", 59, 99, 4, untaxed, "Each"},
	{"Limes", 25, 49, 6, untaxed, "Each"},
	{"Baby Carrots, 1 lb", 129, 199, 2, untaxed, ""},
	{"Red Bell Pepper", 99, 179, 3, untaxed, "Each"},
	{"English Cucumber", 129, 199, 2, untaxed, "Each"},
	{"Honeycrisp Apples, 2 lb", 499, 699, 1, untaxed, ""},
	{"Garlic, 3 ct", 149, 249, 1, untaxed, ""},
	{"Cilantro, bunch", 79, 129, 1, untaxed, ""},
	{"Seedless Red Grapes, 2 lb", 399, 599, 1, untaxed, ""},
}

var dairyAndBakery = []good{
	{"Whole Milk, 1 gal", 329, 489, 2, untaxed, "Grade A, vitamin D"},
	{"2% Reduced Fat Milk, half gal", 229, 349, 2, untaxed, ""},
	{"Large Grade A Eggs, 12 ct", 249, 549, 2, untaxed, "Cage free"},
	{"Chobani Greek Yogurt, Plain, 32 oz", 549, 699, 1, untaxed, "Non-fat"},
	{"Tillamook Medium Cheddar, 8 oz", 399, 549, 2, untaxed, ""},
	{"Kerrygold Salted Butter, 8 oz", 399, 499, 2, untaxed, "Pure Irish butter"},
	{"Philadelphia Cream Cheese, 8 oz", 279, 379, 1, untaxed, ""},
	{"Oatly Oat Milk, 64 oz", 449, 599, 2, untaxed, "Original"},
	{"Dave's Killer Bread, 21 Whole Grains", 549, 699, 1, untaxed, ""},
	{"Plain Bagels, 6 ct", 349, 499, 1, untaxed, ""},
	{"Flour Tortillas, 10 ct", 249, 379, 1, untaxed, ""},
	{"Sourdough Loaf", 449, 649, 1, untaxed, "Baked in store"},
}

var meatAndPantry = []good{
	{"Boneless Skinless Chicken Breast, 1.5 lb", 699, 1099, 2, untaxed, ""},
	{"85% Lean Ground Beef, 1 lb", 549, 799, 2, untaxed, ""},
	{"Atlantic Salmon Fillet, 1 lb", 999, 1399, 1, untaxed, "Farm raised"},
	{"Applewood Smoked Bacon, 12 oz", 549, 799, 1, untaxed, ""},
	{"Barilla Spaghetti, 16 oz", 179, 249, 3, untaxed, ""},
	{"Rao's Marinara Sauce, 24 oz", 699, 899, 2, untaxed, ""},
	{"Jasmine Rice, 2 lb", 349, 499, 1, untaxed, ""},
	{"Cheerios, 18 oz", 449, 599, 1, untaxed, "Family size"},
	{"Kind Bars Dark Chocolate Nuts & Sea Salt, 6 ct", 599, 799, 1, untaxed, ""},
	{"Skippy Creamy Peanut Butter, 16.3 oz", 299, 399, 1, untaxed, ""},
	{"Black Beans, 15 oz can", 99, 149, 4, untaxed, ""},
	{"Extra Virgin Olive Oil, 500 ml", 799, 1199, 1, untaxed, ""},
	{"Ground Coffee, Medium Roast, 12 oz", 799, 1199, 1, untaxed, ""},
	{"Ben & Jerry's Half Baked, pint", 499, 649, 2, untaxed, ""},
	{"Frozen Mixed Vegetables, 16 oz", 199, 299, 2, untaxed, ""},
	{"DiGiorno Pepperoni Pizza", 699, 899, 2, untaxed, "Rising crust"},
	{"Tostitos Scoops, 10 oz", 449, 599, 1, taxed, ""},
	{"LaCroix Sparkling Water, 12 pk", 549, 699, 2, taxed, "Pamplemousse"},
	{"Coca-Cola, 12 pk cans", 799, 999, 1, taxed, ""},
	{"Kombucha, 16 oz", 349, 449, 3, taxed, "Ginger lemon"},
}

var household = []good{
	{"Bounty Paper Towels, 6 double rolls", 1299, 1799, 1, taxed, "Select-A-Size"},
	{"Charmin Ultra Soft, 12 mega rolls", 1499, 1999, 1, taxed, ""},
	{"Tide Pods, 42 ct", 1299, 1499, 1, taxed, "Original scent"},
	{"Dawn Dish Soap, 19.4 oz", 349, 449, 1, taxed, ""},
	{"Glad Trash Bags, 13 gal, 40 ct", 999, 1299, 1, taxed, "ForceFlex"},
	{"Ziploc Gallon Storage Bags, 38 ct", 549, 699, 1, taxed, ""},
	{"Clorox Disinfecting Wipes, 3 pk", 799, 999, 1, taxed, ""},
}

// bulkGoods are warehouse-club packs; %s is the club's house brand.
var bulkGoods = []good{
	{"%s Organic Large Brown Eggs, 24 ct", 799, 999, 1, untaxed, ""},
	{"%s Whole Milk, 2 × 1 gal", 599, 749, 1, untaxed, ""},
	{"%s Rotisserie Chicken", 499, 499, 1, untaxed, "Hot, ready to eat"},
	{"%s Organic Extra Virgin Olive Oil, 2 L", 2399, 2799, 1, untaxed, ""},
	{"%s Bath Tissue, 30 rolls", 2299, 2699, 1, taxed, ""},
	{"%s Paper Towels, 12 rolls", 2199, 2499, 1, taxed, ""},
	{"%s Mixed Nuts, 2.5 lb", 1599, 1899, 1, untaxed, ""},
	{"%s Purified Water, 40 × 16.9 oz", 399, 549, 2, taxed, ""},
	{"%s Wild Alaskan Sockeye Salmon, 3 lb", 3299, 3999, 1, untaxed, "Frozen"},
	{"%s Organic Baby Spinach, 1 lb", 449, 549, 1, untaxed, ""},
	{"%s Frozen Blueberries, 4 lb", 1199, 1399, 1, untaxed, ""},
	{"%s Ultra Clean Laundry Pacs, 152 ct", 2499, 2999, 1, taxed, ""},
	{"%s Dog Food, Chicken & Rice, 40 lb", 4499, 5299, 1, taxed, ""},
	{"%s Ground Beef 88/12, 5 lb", 2299, 2799, 1, untaxed, ""},
	{"Strawberries, 2 lb", 599, 799, 1, untaxed, ""},
	{"Avocados, bag of 6", 699, 899, 1, untaxed, ""},
	{"Croissants, 12 ct", 699, 799, 1, untaxed, "Baked in warehouse"},
	{"Starbucks Pike Place Whole Bean, 2.5 lb", 2499, 2799, 1, untaxed, ""},
	{"Apple AirPods Pro (2nd generation)", 18999, 19999, 1, taxed, "Member-only price"},
	{"Vitamin D3 2000 IU, 600 softgels", 1399, 1699, 1, taxed, ""},
}

// houseBrands are the grocery store brands, by merchant domain.
var houseBrands = map[string]string{
	"costco.com": "Kirkland Signature", "samsclub.com": "Member's Mark", "kroger.com": "Kroger",
	"safeway.com": "Signature SELECT", "wholefoodsmarket.com": "365 by Whole Foods Market",
	"traderjoes.com": "Trader Joe's", "aldi.us": "Simply Nature", "heb.com": "H-E-B", "publix.com": "Publix",
	"walmart.com": "Great Value", "target.com": "Good & Gather",
}

// houseGoods are store-brand grocery staples; %s is the house brand.
var houseGoods = []good{
	{"%s Organic Whole Milk, half gal", 399, 549, 1, untaxed, ""},
	{"%s Shredded Mozzarella, 8 oz", 249, 349, 1, untaxed, ""},
	{"%s Sandwich Bread", 199, 299, 1, untaxed, ""},
	{"%s Unsalted Butter, 16 oz", 429, 599, 1, untaxed, ""},
	{"%s Mandarin Orange Chicken, 22 oz", 499, 599, 2, untaxed, "Frozen"},
	{"%s Organic Peanut Butter, 16 oz", 329, 449, 1, untaxed, ""},
	{"%s Trail Mix, 16 oz", 499, 699, 1, untaxed, ""},
	{"%s Sparkling Water, 8 pk", 349, 449, 1, taxed, ""},
}

var generalGoods = []good{
	{"Anker 3-in-1 USB-C Charging Cable, 6 ft", 1599, 2299, 2, taxed, "Braided nylon"},
	{"Apple AirTag, 4 pack", 7999, 9900, 1, taxed, ""},
	{"Amazon Basics AA Batteries, 24 ct", 1199, 1599, 1, taxed, "Alkaline"},
	{"Stanley Quencher H2.0 Tumbler, 40 oz", 3500, 4500, 1, taxed, "Stainless steel"},
	{"Instant Pot Duo 7-in-1, 6 qt", 7999, 9999, 1, taxed, "Electric pressure cooker"},
	{"LEGO Classic Medium Creative Brick Box", 2999, 3499, 1, taxed, "484 pieces"},
	{"Crayola Washable Markers, 40 ct", 899, 1299, 1, taxed, ""},
	{"Atomic Habits by James Clear (Hardcover)", 1399, 1899, 1, taxed, ""},
	{"Fourth Wing by Rebecca Yarros (Paperback)", 1099, 1499, 1, taxed, ""},
	{"CeraVe Moisturizing Cream, 19 oz", 1599, 1999, 1, taxed, ""},
	{"Crest 3D White Toothpaste, 3 pk", 999, 1299, 1, taxed, ""},
	{"Oral-B iO Series 2 Electric Toothbrush", 4999, 7999, 1, taxed, ""},
	{"Ninja AF101 Air Fryer, 4 qt", 7999, 9999, 1, taxed, ""},
	{"Hamilton Beach FlexBrew Coffee Maker", 7499, 8999, 1, taxed, "Single serve"},
	{"Brita Standard Water Filter Replacements, 3 pk", 1499, 1899, 1, taxed, ""},
	{"Amazon Echo Dot (5th Gen)", 2999, 4999, 1, taxed, "Smart speaker with Alexa"},
	{"Kindle Paperwhite 16 GB", 12999, 15999, 1, taxed, ""},
	{"Fire TV Stick 4K", 2499, 4999, 1, taxed, ""},
	{"JBL Flip 6 Bluetooth Speaker", 9999, 12999, 1, taxed, ""},
	{"Logitech MX Master 3S Mouse", 8999, 9999, 1, taxed, ""},
	{"Yoga Mat, 6 mm", 1999, 3499, 1, taxed, "Non-slip"},
	{"Hydro Flask 32 oz Wide Mouth", 3995, 4495, 1, taxed, ""},
	{"Sharpie Permanent Markers, 12 ct", 799, 1099, 1, taxed, ""},
	{"Command Picture Hanging Strips, 16 pairs", 899, 1199, 1, taxed, ""},
	{"Scotch Heavy Duty Packing Tape, 6 rolls", 1799, 2299, 1, taxed, ""},
	{"Pampers Swaddlers Diapers, Size 3, 136 ct", 4499, 4999, 1, taxed, ""},
	{"Nature Made Fish Oil 1200 mg, 200 softgels", 1599, 2199, 1, taxed, ""},
	{"Bluey Plush Toy, 11 in", 1499, 1999, 1, taxed, ""},
	{"Rubbermaid Brilliance Food Storage, 10 pc", 2999, 3999, 1, taxed, ""},
	{"Phone Case for iPhone 15, MagSafe", 1299, 2499, 1, taxed, ""},
}

var electronicsGoods = []good{
	{"Sony WH-1000XM5 Wireless Headphones", 32999, 39999, 1, taxed, "Noise canceling, black"},
	{"Samsung 65\" Class Crystal UHD 4K Smart TV", 44999, 57999, 1, taxed, ""},
	{"LG 27\" UltraGear QHD Gaming Monitor", 24999, 29999, 1, taxed, ""},
	{"Apple iPad (10th generation) 64 GB Wi-Fi", 34900, 34900, 1, taxed, ""},
	{"Nintendo Switch OLED Model", 34999, 34999, 1, taxed, ""},
	{"Insignia HDMI Cable 2.1, 6 ft", 1999, 2999, 2, taxed, ""},
	{"SanDisk 128 GB Ultra microSDXC Card", 1499, 2499, 2, taxed, ""},
	{"Samsung T7 Portable SSD 1 TB", 8999, 10999, 1, taxed, ""},
	{"Google Nest Thermostat", 12999, 12999, 1, taxed, ""},
	{"Bose SoundLink Flex", 14900, 14900, 1, taxed, ""},
	{"HP DeskJet 4155e All-in-One Printer", 7999, 8999, 1, taxed, ""},
	{"Logitech C920 HD Pro Webcam", 5999, 6999, 1, taxed, ""},
	{"Apple 20W USB-C Power Adapter", 1900, 1900, 2, taxed, ""},
	{"Best Buy essentials 6 ft Lightning Cable", 1499, 1999, 1, taxed, ""},
	{"Geek Squad Protection, 2 year", 2999, 8999, 1, untaxed, "Accidental damage from handling"},
}

var appleGoods = []good{
	{"iPhone 16 128 GB", 79900, 79900, 1, taxed, "Ultramarine, unlocked"},
	{"iPhone 16 Pro 256 GB", 109900, 109900, 1, taxed, "Natural Titanium"},
	{"AirPods 4", 12900, 12900, 1, taxed, ""},
	{"AirPods Pro 2", 24900, 24900, 1, taxed, "USB-C"},
	{"MacBook Air 13-inch M3", 109900, 129900, 1, taxed, "Midnight, 16 GB unified memory"},
	{"iPad Air 11-inch (M2) 128 GB", 59900, 59900, 1, taxed, "Space Gray, Wi-Fi"},
	{"Apple Watch Series 10 GPS 42 mm", 39900, 39900, 1, taxed, "Jet Black Aluminum, Sport Band"},
	{"iPhone 16 Silicone Case with MagSafe", 4900, 4900, 1, taxed, ""},
	{"USB-C to MagSafe 3 Cable (2 m)", 4900, 4900, 1, taxed, ""},
	{"Apple Pencil Pro", 12900, 12900, 1, taxed, ""},
	{"AppleCare+ for iPhone", 9900, 19900, 1, untaxed, "2 years of coverage"},
	{"Magic Keyboard with Touch ID", 14900, 14900, 1, taxed, ""},
}

var apparelGoods = []good{
	{"Nike Air Force 1 '07", 11000, 11500, 1, taxed, "Men's shoes"},
	{"Nike Pegasus 41", 13000, 14000, 1, taxed, "Road running shoes"},
	{"Nike Dri-FIT Legend Tee", 2500, 3000, 3, taxed, "Fitness t-shirt"},
	{"Nike Sportswear Club Fleece Hoodie", 5500, 6500, 1, taxed, ""},
	{"Levi's 501 Original Fit Jeans", 5950, 7950, 2, taxed, ""},
	{"Calvin Klein Cotton Stretch Boxer Briefs, 3 pk", 3950, 4950, 1, taxed, ""},
	{"Ralph Lauren Classic Fit Oxford Shirt", 8950, 11000, 1, taxed, ""},
	{"Zella Live In High Waist Leggings", 5900, 6900, 2, taxed, ""},
	{"UGG Classic Mini II Boot", 15000, 16000, 1, taxed, ""},
	{"Madewell Perfect Vintage Jean", 12800, 13800, 1, taxed, ""},
	{"Free People Adella Slip Dress", 6800, 7800, 1, taxed, ""},
	{"Charter Club Cashmere Crewneck Sweater", 8900, 12900, 1, taxed, ""},
	{"Kate Spade Leather Crossbody Bag", 17900, 29900, 1, taxed, ""},
	{"Smartwool Hike Light Crew Socks", 2100, 2500, 3, taxed, ""},
	{"Clinique Moisture Surge 100H, 1.7 oz", 4400, 4400, 1, taxed, ""},
}

var fastFashionGoods = []good{
	{"Ribbed Knit Crop Top", 499, 1299, 3, taxed, ""},
	{"Floral Print Ruffle Hem Dress", 1199, 2499, 2, taxed, ""},
	{"High Waist Wide Leg Jeans", 1499, 2599, 1, taxed, ""},
	{"Oversized Drop Shoulder Hoodie", 1299, 2299, 1, taxed, ""},
	{"Wireless Earbuds with Charging Case", 899, 1999, 1, taxed, ""},
	{"LED Strip Lights, 50 ft", 799, 1599, 1, taxed, "App controlled"},
	{"Phone Holder for Car Dashboard", 399, 899, 1, taxed, ""},
	{"Silicone Kitchen Utensil Set, 12 pc", 999, 1899, 1, taxed, ""},
	{"Reusable Food Storage Bags, 10 pc", 499, 999, 1, taxed, ""},
	{"Faux Leather Tote Bag", 1199, 2199, 1, taxed, ""},
	{"Gold Plated Hoop Earrings, 6 pairs", 399, 899, 1, taxed, ""},
	{"Cordless Mini Handheld Vacuum", 1599, 2999, 1, taxed, ""},
	{"Cat Teaser Wand Toy Set", 299, 799, 2, taxed, ""},
	{"Desk Organizer, Mesh 5 Compartment", 699, 1299, 1, taxed, ""},
}

var handmadeGoods = []good{
	{"Personalized Leather Keychain", 1200, 2400, 2, taxed, "Hand stamped initials"},
	{"Custom Pet Portrait, Digital Illustration", 2500, 6500, 1, taxed, "Made to order"},
	{"Hand-Thrown Ceramic Mug, Speckled", 2800, 4200, 2, taxed, ""},
	{"Soy Wax Candle, Cedar & Sage, 8 oz", 1600, 2600, 3, taxed, "Hand poured"},
	{"Minimalist Gold Name Necklace", 2900, 5900, 1, taxed, "14k gold filled"},
	{"Linen Tablecloth, Natural", 4500, 8900, 1, taxed, "Stonewashed"},
	{"Botanical Print Set of 3, 8×10", 1800, 3600, 1, taxed, ""},
	{"Macramé Wall Hanging", 3500, 7500, 1, taxed, ""},
	{"Chunky Knit Blanket, Merino", 9500, 16500, 1, taxed, ""},
	{"Wedding Guest Book, Custom Engraved", 3900, 6900, 1, taxed, ""},
	{"Handmade Goat Milk Soap, 3 bars", 1500, 2100, 2, taxed, ""},
	{"Vintage Brass Candlesticks, pair", 2800, 5400, 1, taxed, ""},
}

var petGoods = []good{
	{"Blue Buffalo Life Protection Adult Dog Food, 30 lb", 6498, 7298, 1, taxed, "Chicken & brown rice"},
	{"Purina Pro Plan Adult Cat Food, 16 lb", 4598, 5198, 1, taxed, ""},
	{"Fancy Feast Classic Pate Variety Pack, 24 ct", 2199, 2599, 2, taxed, ""},
	{"Greenies Original Dental Dog Treats, 36 ct", 3498, 4298, 1, taxed, ""},
	{"Frisco Clumping Cat Litter, 40 lb", 1999, 2599, 1, taxed, "Unscented"},
	{"KONG Classic Dog Toy, Large", 1399, 1699, 2, taxed, ""},
	{"NexGard Chewables for Dogs, 6 ct", 8999, 12999, 1, taxed, "Prescription required"},
	{"Frisco Plush Squeaky Toy", 499, 899, 3, taxed, ""},
	{"Arm & Hammer Clump & Seal Litter, 28 lb", 1899, 2299, 1, taxed, ""},
	{"Temptations Classic Cat Treats, 16 oz", 899, 1199, 2, taxed, "Tasty chicken"},
}

var homeImprovementGoods = []good{
	{"DEWALT 20V MAX Cordless Drill/Driver Kit", 9900, 15900, 1, taxed, ""},
	{"BEHR Premium Plus Interior Paint, 1 gal", 3498, 4298, 3, taxed, "Eggshell, Swiss Coffee"},
	{"2 in. × 4 in. × 8 ft. Prime Stud", 398, 598, 12, taxed, ""},
	{"Scotts Turf Builder Lawn Food, 12.5 lb", 2997, 3497, 1, taxed, ""},
	{"Husky 268-Piece Mechanics Tool Set", 9900, 12900, 1, taxed, ""},
	{"LED A19 60W Equivalent Light Bulbs, 8 pk", 997, 1497, 2, taxed, "Daylight"},
	{"Kobalt 24 in. Pipe Wrench", 2498, 2998, 1, taxed, ""},
	{"Gorilla Heavy Duty Construction Adhesive", 598, 798, 2, taxed, ""},
	{"Miracle-Gro Potting Mix, 2 cu ft", 1498, 1798, 3, taxed, ""},
	{"Ring Video Doorbell", 9999, 9999, 1, taxed, ""},
	{"Moen Adler Single-Handle Kitchen Faucet", 8900, 12900, 1, taxed, "Chrome"},
	{"Frost King Weatherstrip Tape", 498, 698, 2, taxed, ""},
	{"Honeywell Home Programmable Thermostat", 3998, 5498, 1, taxed, ""},
	{"Vigoro Brown Mulch, 2 cu ft", 298, 398, 10, taxed, ""},
	{"Ryobi ONE+ 18V Leaf Blower", 9900, 12900, 1, taxed, ""},
}

var furnitureGoods = []good{
	{"KALLAX Shelf Unit, White", 6999, 8999, 1, taxed, "30 3/8 × 57 7/8 in"},
	{"POÄNG Armchair, Birch Veneer", 12999, 14999, 1, taxed, ""},
	{"MALM 6-Drawer Dresser", 27999, 29999, 1, taxed, ""},
	{"Mid-Century Modern Sofa, 84 in", 69999, 129999, 1, taxed, "Performance velvet"},
	{"Queen Upholstered Platform Bed", 32999, 59999, 1, taxed, ""},
	{"Round Dining Table, Oak, 48 in", 39999, 89999, 1, taxed, ""},
	{"Set of 2 Upholstered Dining Chairs", 19999, 39999, 1, taxed, ""},
	{"Area Rug, 8 × 10, Vintage Blue", 14999, 34999, 1, taxed, ""},
	{"Floor Lamp, Brass", 8999, 19999, 1, taxed, ""},
	{"Marin Stoneware Dinnerware Set, 16 pc", 12995, 19995, 1, taxed, ""},
	{"Linen Duvet Cover, Queen", 9999, 24900, 1, taxed, ""},
	{"Bath Towels, Set of 6", 3999, 8999, 1, taxed, "Turkish cotton"},
	{"Wall Mirror, Arched, 24 × 36", 8999, 19999, 1, taxed, ""},
	{"Patio Dining Set, 5 pc", 39999, 79999, 1, taxed, ""},
}

var smartHomeGoods = []good{
	{"Ring Battery Doorbell", 9999, 9999, 1, taxed | shipped, ""},
	{"Ring Stick Up Cam Battery", 9999, 9999, 2, taxed | shipped, ""},
	{"Ring Floodlight Cam Wired Plus", 17999, 17999, 1, taxed | shipped, ""},
	{"Ring Alarm 8-piece Kit", 24999, 24999, 1, taxed | shipped, ""},
	{"Ring Indoor Cam (2nd Gen)", 5999, 5999, 2, taxed | shipped, ""},
	{"Ring Solar Panel", 4999, 4999, 1, taxed | shipped, ""},
	{"Ring Chime Pro", 5999, 5999, 1, taxed | shipped, ""},
	{"Contact Sensor (2nd Gen)", 1999, 1999, 3, taxed | shipped, ""},
}

var homeServices = []good{
	{"Handyman service, 2 hours", 14900, 22900, 1, untaxed, "TV mounting and shelving"},
	{"House cleaning, 3 bedroom", 14900, 24900, 1, untaxed, "Deep clean"},
	{"Lawn mowing and edging", 4500, 8500, 1, untaxed, ""},
	{"Gutter cleaning", 12900, 24900, 1, untaxed, "Up to 2 stories"},
	{"HVAC tune-up", 8900, 14900, 1, untaxed, "Seasonal maintenance"},
	{"Furniture assembly", 7900, 15900, 1, untaxed, ""},
	{"Carpet cleaning, 3 rooms", 11900, 18900, 1, untaxed, ""},
	{"Plumbing repair, leaking faucet", 12500, 28500, 1, untaxed, ""},
}

var pharmacyGoods = []good{
	{"Advil Ibuprofen Tablets 200 mg, 100 ct", 1099, 1499, 1, taxed | fsaEligible, "Pain reliever/fever reducer"},
	{"Tylenol Extra Strength Caplets, 100 ct", 1149, 1599, 1, taxed | fsaEligible, ""},
	{"Claritin 24 Hour Allergy Tablets, 30 ct", 2499, 3299, 1, taxed | fsaEligible, ""},
	{"Zyrtec Allergy Tablets, 45 ct", 3199, 3899, 1, taxed | fsaEligible, ""},
	{"Band-Aid Flexible Fabric Bandages, 100 ct", 849, 1099, 1, taxed | fsaEligible, ""},
	{"Vicks DayQuil/NyQuil Combo Pack, 48 ct", 1999, 2499, 1, taxed | fsaEligible, ""},
	{"Braun ThermoScan 7 Ear Thermometer", 4999, 5999, 1, taxed | fsaEligible, ""},
	{"Neutrogena Ultra Sheer Sunscreen SPF 70", 1099, 1499, 2, taxed | fsaEligible, ""},
	{"Bausch + Lomb Biotrue Contact Lens Solution, 2 pk", 1899, 2399, 1, taxed | fsaEligible, ""},
	{"Flonase Allergy Relief Nasal Spray, 144 sprays", 2499, 3299, 1, taxed | fsaEligible, ""},
	{"Prilosec OTC, 42 ct", 2499, 2999, 1, taxed | fsaEligible, ""},
	{"Omron Blood Pressure Monitor", 5999, 7999, 1, taxed | fsaEligible, "Upper arm"},
	{"CVS Health Reading Glasses +2.00", 1999, 2499, 1, taxed | fsaEligible, ""},
	{"Nature Made Vitamin D3 2000 IU, 220 ct", 1499, 1899, 1, taxed, ""},
	{"Olay Regenerist Micro-Sculpting Cream", 2999, 3699, 1, taxed, ""},
	{"Head & Shoulders Shampoo, 13.5 oz", 799, 999, 1, taxed, ""},
	{"Colgate Total Toothpaste, 2 pk", 699, 999, 1, taxed, ""},
	{"Greeting Card", 399, 799, 2, taxed, ""},
	{"Reese's Peanut Butter Cups, King Size", 249, 299, 2, taxed, ""},
	{"Smartwater, 1 L", 249, 299, 2, taxed, ""},
	{"Covid-19 Antigen Home Test, 2 ct", 1599, 2399, 1, taxed | fsaEligible, ""},
}

// prescriptions are filled with an Rx number; all are FSA/HSA eligible.
var prescriptions = []good{
	{"Atorvastatin 20 mg, 30 tablets", 500, 2500, 1, fsaEligible, "Generic for Lipitor"},
	{"Lisinopril 10 mg, 30 tablets", 400, 1500, 1, fsaEligible, "Generic for Zestril"},
	{"Amoxicillin 500 mg, 21 capsules", 600, 1800, 1, fsaEligible, ""},
	{"Levothyroxine 50 mcg, 90 tablets", 1000, 3000, 1, fsaEligible, "Generic for Synthroid"},
	{"Sertraline 50 mg, 30 tablets", 500, 2000, 1, fsaEligible, "Generic for Zoloft"},
	{"Metformin ER 500 mg, 60 tablets", 400, 1600, 1, fsaEligible, ""},
	{"Albuterol HFA Inhaler, 8.5 g", 2500, 6500, 1, fsaEligible, ""},
	{"Omeprazole 20 mg, 30 capsules", 500, 1900, 1, fsaEligible, ""},
	{"Fluticasone Nasal Spray 50 mcg", 1200, 2800, 1, fsaEligible, ""},
	{"Amlodipine 5 mg, 90 tablets", 800, 2400, 1, fsaEligible, "Generic for Norvasc"},
}

var telehealthGoods = []good{
	{"Finasteride 1 mg, 30 tablets", 2200, 3000, 1, fsaEligible, "Prescription hair loss treatment"},
	{"Minoxidil 5% Topical Solution", 1500, 2500, 1, taxed | fsaEligible, ""},
	{"Thick Fix Shampoo", 1900, 2500, 1, taxed, ""},
	{"Biotin Gummies, 30 ct", 1500, 2000, 1, taxed, ""},
	{"Custom Anti-Aging Cream", 3000, 4500, 1, fsaEligible, "Prescription tretinoin formula"},
	{"Sildenafil 20 mg, 10 tablets", 2000, 4500, 1, fsaEligible, ""},
	{"Provider consultation", 3900, 3900, 1, fsaEligible, "Online visit"},
}
